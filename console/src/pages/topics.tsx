import { useState } from 'preact/hooks';
import { SUBSCRIPTIONS, TOPIC_VISIBILITIES } from '../../../functions/contacts/contact.js';
import { ActionNotes, useAction } from '../action.js';
import type { Topic, Topics } from '../answers.js';
import { api, query } from '../api.js';
import { ErrorNote, Loading, PageHeading, restricted, Status, useLoad, When } from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import '../lists.css';
import { FilterSelect, List, usePagedList } from '../list.js';
import { href } from '../router.js';

const PAGE_SIZE = 20;

const path = (id: string) => `/v1/topics/${encodeURIComponent(id)}`;

type Visibility = Topic['visibility'];

/** What each value means, for a person choosing it. */
const DEFAULT_MEANS: Record<Topic['default_subscription'], string> = {
  opt_in: 'sent to every contact who has not opted out (and to addresses without a contact)',
  opt_out: 'sent only to contacts who opted in',
};
const VISIBILITY_MEANS: Record<Visibility, string> = {
  public: 'every contact sees it on the preference page',
  private: 'only contacts opted in see it on the preference page',
};

/** `#/topics` lists them; `#/topics/<id>` is one. */
export function TopicsPage({ id }: { id: string | undefined }) {
  return id ? <TopicPage id={id} /> : <TopicList />;
}

function TopicList() {
  const list = usePagedList(
    (_, cursor) => api<Topics>(`/v1/topics${query({ limit: PAGE_SIZE, ...cursor })}`, { what: 'the topics' }),
    [],
  );
  return (
    <>
      <PageHeading>Topics</PageHeading>
      <p class="muted">
        What a contact may opt in to or out of. An email sent with a <code>topic_id</code> goes only to those
        its topic allows, each with a one-click unsubscribe link for it.
      </p>
      <List
        list={list}
        empty={{
          title: 'No topic yet.',
          help: (
            <p>
              Make one below, or with the API:
              <pre>{`curl ${location.origin}/v1/topics -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d '{"name":"Product updates","default_subscription":"opt_in"}'`}</pre>
            </p>
          ),
        }}
        columns={['Name', 'Description', 'Default', 'Visibility', 'Created']}
        row={(topic) => (
          <tr>
            <td>
              <a href={href('topics', topic.id)}>{topic.name}</a>
            </td>
            <td>{topic.description || <span class="muted">—</span>}</td>
            <td>
              <Status value={topic.default_subscription} />
            </td>
            <td>
              <Status value={topic.visibility} />
            </td>
            <td>
              <When at={topic.created_at} />
            </td>
          </tr>
        )}
      />
      {!restricted(list.error) && <TopicForm />}
    </>
  );
}

/** A new topic (then its page opens), or an existing one's name, description and visibility. */
function TopicForm({ topic, onSaved }: { topic?: Topic; onSaved?: () => void }) {
  const [name, setName] = useState(topic?.name ?? '');
  const [description, setDescription] = useState(topic?.description ?? '');
  const [subscription, setSubscription] = useState<string>(topic?.default_subscription ?? '');
  const [visibility, setVisibility] = useState<string>(topic?.visibility ?? '');
  const action = useAction(onSaved);
  const id = topic ? 'edit-topic' : 'new-topic';
  const text = (field: string, label: string, value: string, set: (v: string) => void, max: number) => (
    <div>
      <label for={`${id}-${field}`}>{label}</label>
      <input
        id={`${id}-${field}`}
        required={field === 'name'}
        maxLength={max}
        autocomplete="off"
        value={value}
        onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
      />
    </div>
  );
  // A new topic's description only when given; an edit's when changed (emptied too).
  const body = {
    name: name.trim(),
    description: topic
      ? description.trim() === (topic.description ?? '')
        ? undefined
        : description.trim()
      : description.trim() || undefined,
    visibility: visibility || undefined,
  };
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{topic ? 'Edit' : 'New topic'}</h2>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          action.run(
            async () => {
              if (topic) await api(path(topic.id), { method: 'PATCH', body, what: 'topics' });
              else {
                const created = await api<{ id: string }>('/v1/topics', {
                  method: 'POST',
                  body: { ...body, default_subscription: subscription },
                  what: 'topics',
                });
                location.hash = href('topics', created.id);
              }
            },
            topic ? 'Saved.' : '',
          );
        }}
      >
        {text('name', 'Name', name, setName, 50)}
        {text('description', 'Description', description, setDescription, 200)}
        {topic ? (
          <p class="muted">
            Default subscription <Status value={topic.default_subscription} />:{' '}
            {DEFAULT_MEANS[topic.default_subscription]}. It cannot change after creation.
          </p>
        ) : (
          <>
            <FilterSelect
              filter={{
                id: `${id}-default`,
                label: 'Default subscription',
                any: 'Choose…',
                values: SUBSCRIPTIONS,
              }}
              value={subscription}
              onChange={setSubscription}
            />
            <p class="muted">
              {subscription in DEFAULT_MEANS
                ? `${DEFAULT_MEANS[subscription as keyof typeof DEFAULT_MEANS]}. It cannot change later.`
                : 'Who gets its emails without a choice of their own. It cannot change later.'}
            </p>
          </>
        )}
        <FilterSelect
          filter={{
            id: `${id}-visibility`,
            label: 'Visibility',
            any: topic ? 'Unchanged' : 'private (the default)',
            values: TOPIC_VISIBILITIES,
          }}
          value={visibility}
          onChange={setVisibility}
        />
        {visibility in VISIBILITY_MEANS && <p class="muted">{VISIBILITY_MEANS[visibility as Visibility]}.</p>}
        <div>
          <button type="submit" disabled={action.busy || (!topic && !subscription)}>
            {topic ? 'Save' : 'Create topic'}
          </button>
        </div>
      </form>
      <ActionNotes action={action} />
    </section>
  );
}

function TopicPage({ id }: { id: string }) {
  const topic = useLoad(() => api<Topic>(path(id), { what: 'topics' }), [id]);
  const t = topic.data;
  const action = useAction();
  return (
    <>
      <p>
        <a href="#/topics">← Topics</a>
      </p>
      <PageHeading>{t ? t.name : `Topic ${id}`}</PageHeading>
      <ErrorNote error={topic.error} />
      {!t && topic.loading && <Loading />}
      {t && (
        <>
          <dl class="fields">
            <dt>Description</dt>
            <dd>{t.description || <span class="muted">—</span>}</dd>
            <dt>Default subscription</dt>
            <dd>
              <Status value={t.default_subscription} />{' '}
              <span class="muted">{DEFAULT_MEANS[t.default_subscription]}</span>
            </dd>
            <dt>Visibility</dt>
            <dd>
              <Status value={t.visibility} /> <span class="muted">{VISIBILITY_MEANS[t.visibility]}</span>
            </dd>
            <dt>Created</dt>
            <dd>
              <When at={t.created_at} />
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{t.id}</code>{' '}
              <span class="muted">
                a send's <code>topic_id</code>
              </span>
            </dd>
          </dl>
          <TopicForm topic={t} onSaved={topic.reload} />
          <h2>Delete</h2>
          <ConfirmAction
            label="Delete topic"
            confirmLabel="Delete"
            busy={action.busy}
            question={`Delete the topic ${t.name}, with every contact's choice of it?`}
            onConfirm={() =>
              action.run(async () => {
                await api(path(t.id), { method: 'DELETE', what: 'topics' });
                location.hash = '#/topics';
              })
            }
          />
          <ActionNotes action={action} />
        </>
      )}
    </>
  );
}
