import { useState } from 'preact/hooks';
import { ActionNotes, useAction } from '../action.js';
import type { Broadcast, Segments, Topics } from '../answers.js';
import { ApiFailure, api, query } from '../api.js';
import {
  type BroadcastForm,
  createBody,
  emptyForm,
  formOf,
  problemsOf,
  updateBody,
} from '../broadcast-form.js';
import { ErrorNote, useLoad } from '../components.js';
import { href } from '../router.js';

/** The segments by name (the newest 100: one request), for the list's and the form's words. */
export function useSegmentNames() {
  const segments = useLoad(
    () => api<Segments>(`/v1/segments${query({ limit: 100 })}`, { what: 'the segments' }),
    [],
  );
  const names: Record<string, string> = Object.fromEntries(
    (segments.data?.data ?? []).map((s) => [s.id, s.name]),
  );
  return { segments, names };
}

/**
 * The compose form: a new broadcast's (saved as a draft, then its page opens) or a draft's (saved
 * with PATCH, the changed fields only). The segment and topic are chosen from the API's lists (the
 * newest 100 of each: two requests when the form opens).
 */
export function Compose({ broadcast, onSaved }: { broadcast?: Broadcast; onSaved?: () => void }) {
  const [form, setForm] = useState<BroadcastForm>(() => (broadcast ? formOf(broadcast) : emptyForm()));
  const { segments } = useSegmentNames();
  const topics = useLoad(() => api<Topics>(`/v1/topics${query({ limit: 100 })}`, { what: 'the topics' }), []);
  const action = useAction(onSaved);
  const set = (field: keyof BroadcastForm) => (value: string) =>
    setForm((now) => ({ ...now, [field]: value }));
  const problems = problemsOf(form);
  const changed = broadcast ? Object.keys(updateBody(form, broadcast)).length > 0 : true;
  const save = () =>
    action.run(
      async () => {
        if (problems.length)
          throw new ApiFailure(0, 'validation_error', problems.join(' '), 'Then save again.');
        if (broadcast)
          await api(`/v1/broadcasts/${encodeURIComponent(broadcast.id)}`, {
            method: 'PATCH',
            body: updateBody(form, broadcast),
            what: 'broadcasts',
          });
        else {
          const created = await api<{ id: string }>('/v1/broadcasts', {
            method: 'POST',
            body: createBody(form),
            what: 'broadcasts',
          });
          location.hash = href('broadcasts', created.id);
        }
      },
      broadcast ? 'Draft saved.' : '',
    );
  const segmentList = segments.data?.data ?? [];
  const topicList = topics.data?.data ?? [];
  // A draft's segment or topic not among the newest 100 stays choosable, by its id.
  const segmentChoices = [
    ...segmentList.map((s) => ({ id: s.id, name: s.name })),
    ...(form.segment_id && !segmentList.some((s) => s.id === form.segment_id)
      ? [{ id: form.segment_id, name: form.segment_id }]
      : []),
  ];
  const topicChoices = [
    ...topicList.map((t) => ({ id: t.id, name: t.name })),
    ...(form.topic_id && !topicList.some((t) => t.id === form.topic_id)
      ? [{ id: form.topic_id, name: form.topic_id }]
      : []),
  ];
  return (
    <section aria-labelledby="compose-heading">
      <h2 id="compose-heading">{broadcast ? 'Edit draft' : 'Compose'}</h2>
      <form
        class="stack broadcast-form"
        onSubmit={(event) => {
          event.preventDefault();
          save();
        }}
      >
        <Field
          id="broadcast-name"
          label="Name"
          value={form.name}
          onInput={set('name')}
          hint="For you: recipients do not see it."
        />
        <div>
          <label for="broadcast-segment">Segment</label>
          <select
            id="broadcast-segment"
            aria-required="true"
            value={form.segment_id}
            onChange={(e) => set('segment_id')((e.currentTarget as HTMLSelectElement).value)}
            aria-describedby="broadcast-segment-hint"
          >
            <option value="">Choose…</option>
            {segmentChoices.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
          <p id="broadcast-segment-hint" class="muted hint">
            {segments.data && segmentList.length === 0 ? (
              <>
                No segment yet: <a href="#/segments">make one on the Segments page</a>.
              </>
            ) : (
              'Every contact in it when the send begins gets its own email.'
            )}
          </p>
          <ErrorNote error={segments.error} />
        </div>
        <div>
          <label for="broadcast-topic">Topic</label>
          <select
            id="broadcast-topic"
            value={form.topic_id}
            onChange={(e) => set('topic_id')((e.currentTarget as HTMLSelectElement).value)}
            aria-describedby="broadcast-topic-hint"
          >
            <option value="">No topic</option>
            {topicChoices.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
          <p id="broadcast-topic-hint" class="muted hint">
            With a topic, contacts who opted out of it are left out, and the unsubscribe link is the topic's.
            Contacts unsubscribed from everything are left out either way.
          </p>
          <ErrorNote error={topics.error} />
        </div>
        <Field
          id="broadcast-from"
          label="From"
          value={form.from}
          onInput={set('from')}
          placeholder="News <news@example.com>"
          hint="An address at a verified domain."
        />
        <Field id="broadcast-subject" label="Subject" value={form.subject} onInput={set('subject')} />
        <Field
          id="broadcast-reply-to"
          label="Reply to"
          value={form.reply_to}
          onInput={set('reply_to')}
          hint="Addresses separated by commas; none: replies go to From."
        />
        <Field
          id="broadcast-preview-text"
          label="Preview text"
          value={form.preview_text}
          onInput={set('preview_text')}
          hint="The line mail apps show after the subject; hidden in the email itself."
        />
        <Field
          id="broadcast-html"
          label="HTML"
          value={form.html}
          onInput={set('html')}
          multiline
          hint="Merge tags: {{{contact.first_name|there}}} (a contact's field or property, with a fallback after |), {{{FIRST_NAME}}}, and {{{RESEND_UNSUBSCRIBE_URL}}}, the contact's own unsubscribe link."
        />
        <Field id="broadcast-text" label="Text" value={form.text} onInput={set('text')} multiline />
        <div class="actions">
          <button type="submit" disabled={action.busy || !changed}>
            {broadcast ? 'Save draft' : 'Create draft'}
          </button>
          {broadcast && !changed && <span class="muted">No change to save.</span>}
        </div>
      </form>
      <ActionNotes action={action} />
    </section>
  );
}

function Field({
  id,
  label,
  hint,
  value,
  placeholder,
  multiline,
  onInput,
}: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  placeholder?: string;
  multiline?: boolean;
  onInput: (value: string) => void;
}) {
  const input = (e: Event) => onInput((e.currentTarget as HTMLInputElement | HTMLTextAreaElement).value);
  const described = hint ? `${id}-hint` : undefined;
  return (
    <div>
      <label for={id}>{label}</label>
      {multiline ? (
        <textarea
          id={id}
          rows={8}
          spellcheck={false}
          value={value}
          onInput={input}
          aria-describedby={described}
        />
      ) : (
        <input
          id={id}
          type="text"
          autocomplete="off"
          placeholder={placeholder}
          value={value}
          onInput={input}
          aria-describedby={described}
        />
      )}
      {hint && (
        <p id={described} class="muted hint">
          {hint}
        </p>
      )}
    </div>
  );
}
