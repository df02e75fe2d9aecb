import { useEffect, useState } from 'preact/hooks';
import { ActionNotes, useAction } from '../action.js';
import type { Broadcast, BroadcastPreview, BroadcastStatus, Contacts, Topic } from '../answers.js';
import { ApiFailure, api, query } from '../api.js';
import {
  actionsOf,
  cancelQuestion,
  localInputOf,
  progressOf,
  progressWords,
  refreshMsOf,
  STATUS_MEANS,
  scheduleIso,
  waitingWords,
} from '../broadcast-form.js';
import { Address, Empty, ErrorNote, Loading, PageHeading, Status, useLoad, When } from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import { Preview } from '../preview.js';
import { href } from '../router.js';
import { Compose, useSegmentNames } from './broadcast-compose.js';
import { Performance } from './broadcast-performance.js';

const path = (id: string, ...rest: string[]) =>
  `/v1/broadcasts/${[id, ...rest].map(encodeURIComponent).join('/')}`;

/**
 * One broadcast (`#/broadcasts/<id>`): its fields and status in words; a draft's form, sending now
 * or at a time; its progress while it sends (asked again every 3 s while queued or sending, every
 * 15 s while scheduled, not after); cancel, duplicate and delete where its status allows; a preview
 * rendered by the service for a contact of its segment; and, once sending, its performance.
 */
export function BroadcastPage({ id }: { id: string }) {
  const [status, setStatus] = useState<BroadcastStatus>();
  const broadcast = useLoad(
    () => api<Broadcast>(path(id), { what: 'broadcasts' }),
    [id],
    refreshMsOf(status),
  );
  const b = broadcast.data;
  useEffect(() => {
    if (b) setStatus(b.status);
  }, [b?.status]);
  const missing = broadcast.error instanceof ApiFailure && broadcast.error.status === 404;
  return (
    <>
      <p>
        <a href="#/broadcasts">← Broadcasts</a>
      </p>
      <PageHeading>{b ? b.name || b.subject || '(no name)' : `Broadcast ${id}`}</PageHeading>
      {missing ? (
        <Empty title="No broadcast with this id.">
          <p>
            It may have been deleted: <a href="#/broadcasts">go back to the list</a>.
          </p>
        </Empty>
      ) : (
        <ErrorNote error={broadcast.error} />
      )}
      {!b && broadcast.loading && <Loading />}
      {b && <Loaded broadcast={b} reload={broadcast.reload} />}
    </>
  );
}

function Loaded({ broadcast: b, reload }: { broadcast: Broadcast; reload: () => void }) {
  const { names } = useSegmentNames();
  const segment = b.segment_id ?? b.audience_id ?? null;
  const may = actionsOf(b.status);
  return (
    <>
      <dl class="fields">
        <dt>Status</dt>
        <dd>
          <Status value={b.status} /> <span class="muted">{STATUS_MEANS[b.status]}</span>
        </dd>
        {b.waiting && (
          <>
            <dt>Waiting</dt>
            <dd>
              <span role="status">{waitingWords(b.waiting)}</span>{' '}
              <span class="muted">
                (since <When at={b.waiting.since} />)
              </span>
            </dd>
          </>
        )}
        <dt>Segment</dt>
        <dd>
          {segment ? (
            <a href={href('segments', segment)}>{names[segment] ?? <code class="id">{segment}</code>}</a>
          ) : (
            <span class="muted">—</span>
          )}
        </dd>
        <dt>Topic</dt>
        <dd>{b.topic_id ? <TopicName id={b.topic_id} /> : <span class="muted">none</span>}</dd>
        <dt>From</dt>
        <dd>{b.from ? <Address value={b.from} /> : <span class="muted">—</span>}</dd>
        <dt>Subject</dt>
        <dd>{b.subject || <span class="muted">—</span>}</dd>
        {b.reply_to?.length ? (
          <>
            <dt>Reply to</dt>
            <dd>{b.reply_to.join(', ')}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>
          <When at={b.created_at} />
        </dd>
        {b.scheduled_at && (
          <>
            <dt>Scheduled for</dt>
            <dd>
              <When at={b.scheduled_at} />
            </dd>
          </>
        )}
        {b.sent_at && (
          <>
            <dt>Sending began</dt>
            <dd>
              <When at={b.sent_at} />
            </dd>
          </>
        )}
        <dt>Id</dt>
        <dd>
          <code>{b.id}</code>
        </dd>
      </dl>
      {b.status !== 'draft' && b.status !== 'scheduled' && <SendProgress broadcast={b} />}
      <Actions broadcast={b} reload={reload} />
      {may.edit && <Compose key={b.id} broadcast={b} onSaved={reload} />}
      <PreviewFor broadcast={b} segment={segment} />
      {b.status !== 'draft' && b.status !== 'scheduled' && <Performance broadcast={b} />}
    </>
  );
}

/** A topic's name (one request), its id until it answers. */
function TopicName({ id }: { id: string }) {
  const topic = useLoad(() => api<Topic>(`/v1/topics/${encodeURIComponent(id)}`, { what: 'topics' }), [id]);
  return <a href={href('topics', id)}>{topic.data?.name ?? <code class="id">{id}</code>}</a>;
}

function SendProgress({ broadcast }: { broadcast: Broadcast }) {
  const p = progressOf(broadcast);
  return (
    <section aria-labelledby="progress-heading">
      <h2 id="progress-heading">Progress</h2>
      <p role="status" data-testid="progress">
        {progressWords(broadcast)}
      </p>
      {p.created > 0 && (
        <progress
          class="bar"
          max={p.created}
          value={p.handled}
          aria-label={`${p.handled} of ${p.created} emails handed to SES or ended`}
        />
      )}
    </section>
  );
}

/** Send now or at a time (a draft), cancel, duplicate, delete: each where the status allows it. */
function Actions({ broadcast: b, reload }: { broadcast: Broadcast; reload: () => void }) {
  const may = actionsOf(b.status);
  const action = useAction(reload);
  const [when, setWhen] = useState(() => localInputOf(new Date(Date.now() + 3_600_000)));
  const send = (scheduledAt?: string) =>
    action.run(
      () =>
        api(path(b.id, 'send'), {
          method: 'POST',
          body: scheduledAt ? { scheduled_at: scheduledAt } : {},
          what: 'broadcasts',
        }),
      scheduledAt ? 'Scheduled.' : 'Sending.',
    );
  return (
    <section aria-labelledby="actions-heading">
      <h2 id="actions-heading">Actions</h2>
      {may.send && (
        <div class="actions">
          <ConfirmAction
            label="Send now"
            confirmLabel="Send"
            danger={false}
            busy={action.busy}
            question="Send it now to every contact of its segment (but those unsubscribed or opted out)? A draft's unsaved changes are not sent."
            onConfirm={() => send()}
          />
          <div>
            <label for="broadcast-when">Send at (your time zone)</label>
            <br />
            <input
              id="broadcast-when"
              type="datetime-local"
              value={when}
              onInput={(e) => setWhen((e.currentTarget as HTMLInputElement).value)}
            />
          </div>
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() => {
              const schedule = scheduleIso(when, new Date());
              if (schedule.iso) send(schedule.iso);
              else
                action.run(async () => {
                  throw new ApiFailure(0, 'validation_error', schedule.problem ?? '', 'Then press Schedule.');
                });
            }}
          >
            Schedule
          </button>
        </div>
      )}
      <div class="actions">
        {may.cancel && (
          <ConfirmAction
            label="Cancel broadcast"
            confirmLabel="Cancel broadcast"
            busy={action.busy}
            question={cancelQuestion(b.status)}
            onConfirm={() =>
              action.run(
                () => api(path(b.id, 'cancel'), { method: 'POST', what: 'broadcasts' }),
                b.status === 'scheduled' ? 'Schedule canceled: a draft again.' : 'Canceled.',
              )
            }
          />
        )}
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              const copy = await api<{ id: string }>(path(b.id, 'duplicate'), {
                method: 'POST',
                what: 'broadcasts',
              });
              location.hash = href('broadcasts', copy.id);
            })
          }
        >
          Duplicate
        </button>
        {may.remove && (
          <ConfirmAction
            label="Delete broadcast"
            confirmLabel="Delete"
            busy={action.busy}
            question={
              b.status === 'scheduled'
                ? 'Delete it? Its schedule is canceled and nothing is sent.'
                : 'Delete this draft?'
            }
            onConfirm={() =>
              action.run(async () => {
                await api(path(b.id), { method: 'DELETE', what: 'broadcasts' });
                location.hash = '#/broadcasts';
              })
            }
          />
        )}
      </div>
      <ActionNotes action={action} />
    </section>
  );
}

/** The saved broadcast rendered by the service for a contact of its segment (or a sample with no fields). */
function PreviewFor({ broadcast, segment }: { broadcast: Broadcast; segment: string | null }) {
  const contacts = useLoad(
    () =>
      segment
        ? api<Contacts>(`/v1/contacts${query({ limit: 50, segment_id: segment })}`, {
            what: "the segment's contacts",
          })
        : Promise.resolve(undefined),
    [segment],
  );
  const [contact, setContact] = useState('');
  const [shown, setShown] = useState<BroadcastPreview>();
  const action = useAction();
  const members = contacts.data?.data ?? [];
  return (
    <section aria-labelledby="preview-heading">
      <h2 id="preview-heading">Preview</h2>
      <p class="muted">
        The saved broadcast as one contact gets it, merge tags filled by the service. Its unsubscribe link is
        a stand-in that unsubscribes no one.
      </p>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          action.run(async () => {
            setShown(
              await api<BroadcastPreview>(path(broadcast.id, 'preview'), {
                method: 'POST',
                body: contact ? { contact } : {},
                what: 'broadcasts',
              }),
            );
          });
        }}
      >
        <div>
          <label for="preview-contact">Contact</label>
          <select
            id="preview-contact"
            value={contact}
            onChange={(e) => setContact((e.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">A sample contact with no fields</option>
            {members.map((c) => (
              <option key={c.id} value={c.id}>
                {c.email}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit" disabled={action.busy}>
            Preview
          </button>
        </div>
      </form>
      {contacts.data?.has_more && <p class="muted">The segment's first 50 contacts are offered.</p>}
      <ErrorNote error={contacts.error} />
      <ActionNotes action={action} />
      {shown && (
        <div data-testid="broadcast-preview">
          <p>
            <strong>Subject:</strong> <span data-testid="preview-subject">{shown.subject}</span>
          </p>
          {shown.email && (
            <p class="muted">
              As <Address value={shown.email} /> gets it.
            </p>
          )}
          {shown.html ? <Preview html={shown.html} /> : <p class="muted">No HTML part.</p>}
          <h3>Text</h3>
          {shown.text ? (
            <pre data-testid="preview-text">{shown.text}</pre>
          ) : (
            <p class="muted">No text part.</p>
          )}
        </div>
      )}
    </section>
  );
}
