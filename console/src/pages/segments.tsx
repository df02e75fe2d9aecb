import { useState } from 'preact/hooks';
import { ActionNotes, useAction } from '../action.js';
import type { Contacts, Segment, Segments } from '../answers.js';
import { api, query } from '../api.js';
import { Address, ErrorNote, Loading, PageHeading, restricted, useLoad, When } from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import '../lists.css';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';
import { fullName, Subscribed } from './contact.js';

const PAGE_SIZE = 20;

const path = (id: string, ...rest: string[]) =>
  `/v1/segments/${[id, ...rest].map(encodeURIComponent).join('/')}`;

/** `#/segments` lists them; `#/segments/<id>` is one, with its contacts. */
export function SegmentsPage({ id }: { id: string | undefined }) {
  return id ? <SegmentPage id={id} /> : <SegmentList />;
}

function SegmentList() {
  // Segments change only when someone edits them: one request a page, no refresh.
  const list = usePagedList(
    (_, cursor) =>
      api<Segments>(`/v1/segments${query({ limit: PAGE_SIZE, ...cursor })}`, { what: 'the segments' }),
    [],
  );
  return (
    <>
      <PageHeading>Segments</PageHeading>
      <p class="muted">
        Groups of contacts (Resend's audiences are segments here). A contact may be in many; deleting a
        segment deletes no contact.
      </p>
      <List
        list={list}
        empty={{
          title: 'No segment yet.',
          help: (
            <p>
              Make one below, or with the API:
              <pre>{`curl ${location.origin}/v1/segments -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' -d '{"name":"Newsletter"}'`}</pre>
            </p>
          ),
        }}
        columns={['Name', 'Created', 'Id']}
        row={(segment) => (
          <tr>
            <td>
              <a href={href('segments', segment.id)}>{segment.name}</a>
            </td>
            <td>
              <When at={segment.created_at} />
            </td>
            <td>
              <code>{segment.id}</code>
            </td>
          </tr>
        )}
      />
      {!restricted(list.error) && <NameForm id="new-segment" heading="New segment" button="Create segment" />}
    </>
  );
}

/** A segment's name: a new segment's (then its page opens), or a new name for one (`segment`). */
function NameForm({
  id,
  heading,
  button,
  segment,
  onSaved,
}: {
  id: string;
  heading: string;
  button: string;
  segment?: Segment;
  onSaved?: () => void;
}) {
  const [name, setName] = useState(segment?.name ?? '');
  const action = useAction(onSaved);
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{heading}</h2>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          action.run(
            async () => {
              if (segment)
                await api(path(segment.id), {
                  method: 'PATCH',
                  body: { name: name.trim() },
                  what: 'segments',
                });
              else {
                const created = await api<{ id: string }>('/v1/segments', {
                  method: 'POST',
                  body: { name: name.trim() },
                  what: 'segments',
                });
                location.hash = href('segments', created.id);
              }
            },
            segment ? 'Renamed.' : '',
          );
        }}
      >
        <div>
          <label for={`${id}-name`}>Name</label>
          <input
            id={`${id}-name`}
            required
            autocomplete="off"
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div>
          <button type="submit" disabled={action.busy}>
            {button}
          </button>
        </div>
      </form>
      <ActionNotes action={action} />
    </section>
  );
}

function SegmentPage({ id }: { id: string }) {
  const segment = useLoad(() => api<Segment>(path(id), { what: 'segments' }), [id]);
  const s = segment.data;
  const action = useAction();
  return (
    <>
      <p>
        <a href="#/segments">← Segments</a>
      </p>
      <PageHeading>{s ? s.name : `Segment ${id}`}</PageHeading>
      <ErrorNote error={segment.error} />
      {!s && segment.loading && <Loading />}
      {s && (
        <>
          <dl class="fields">
            <dt>Name</dt>
            <dd>{s.name}</dd>
            <dt>Created</dt>
            <dd>
              <When at={s.created_at} />
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{s.id}</code>
            </dd>
          </dl>
          <NameForm
            id="rename-segment"
            heading="Rename"
            button="Rename"
            segment={s}
            onSaved={segment.reload}
          />
          <Members id={s.id} />
          <h2>Delete</h2>
          <ConfirmAction
            label="Delete segment"
            confirmLabel="Delete"
            busy={action.busy}
            question={`Delete the segment ${s.name}? Its contacts stay, in their other segments; only their membership of this one goes.`}
            onConfirm={() =>
              action.run(async () => {
                await api(path(s.id), { method: 'DELETE', what: 'segments' });
                location.hash = '#/segments';
              })
            }
          />
          <ActionNotes action={action} />
        </>
      )}
    </>
  );
}

/** The segment's contacts, by pages (`GET /v1/segments/{id}/contacts`). */
function Members({ id }: { id: string }) {
  const list = usePagedList(
    (_, cursor) =>
      api<Contacts>(`${path(id, 'contacts')}${query({ limit: PAGE_SIZE, ...cursor })}`, {
        what: "the segment's contacts",
      }),
    [id],
  );
  return (
    <section aria-labelledby="segment-contacts">
      <h2 id="segment-contacts">Contacts</h2>
      <List
        list={list}
        empty={{
          title: 'No contact in this segment.',
          help: (
            <p>
              Add one from its page (<a href="#/contacts">Contacts</a>), or with{' '}
              <code>
                POST /v1/contacts/{'{id}'}/segments/{id}
              </code>
              .
            </p>
          ),
        }}
        columns={['Email', 'Name', 'Subscription', 'Created']}
        row={(contact) => (
          <tr>
            <td>
              <a href={href('contacts', contact.id)}>
                <Address value={contact.email} />
              </a>
            </td>
            <td>{fullName(contact) || <span class="muted">—</span>}</td>
            <td>
              <Subscribed unsubscribed={contact.unsubscribed} />
            </td>
            <td>
              <When at={contact.created_at} />
            </td>
          </tr>
        )}
      />
    </section>
  );
}
