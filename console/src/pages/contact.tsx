import { useState } from 'preact/hooks';
import { ActionNotes, useAction } from '../action.js';
import type {
  Contact,
  ContactSegments,
  ContactTopic,
  ContactTopics,
  Segments,
  Subscription,
} from '../answers.js';
import { ApiFailure, api, query } from '../api.js';
import { Address, Empty, ErrorNote, Loading, PageHeading, Status, useLoad, When } from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import '../lists.css';
import { List, Table } from '../list.js';
import { href } from '../router.js';

/** A contact's name, or nothing. */
export const fullName = (contact: { first_name: string | null; last_name: string | null }) =>
  [contact.first_name, contact.last_name].filter(Boolean).join(' ');

/** Subscribed or not, as a badge: global, for every topic and broadcast. */
export const Subscribed = ({ unsubscribed }: { unsubscribed: boolean }) => (
  <Status value={unsubscribed ? 'unsubscribed' : 'subscribed'} />
);

/** `/v1/contacts/<id or address>/…`: the API takes either, the address in any case. */
const path = (idOrEmail: string, ...rest: string[]) =>
  `/v1/contacts/${[idOrEmail, ...rest].map(encodeURIComponent).join('/')}`;

/**
 * One contact (`#/contacts/<id>`, or `#/contacts/<address>` as "Find by address" opens it): its
 * fields and properties, its segments and its topics, each editable. Three requests when it opens
 * (the contact, its segments, its topics) and one for the segments it may be added to; no refresh.
 */
export function ContactPage({ idOrEmail }: { idOrEmail: string }) {
  const contact = useLoad(() => api<Contact>(path(idOrEmail), { what: 'contacts' }), [idOrEmail]);
  const c = contact.data;
  const missing = contact.error instanceof ApiFailure && contact.error.status === 404;
  return (
    <>
      <p>
        <a href="#/contacts">← Contacts</a>
      </p>
      <PageHeading>
        {c ? <Address value={c.email} /> : <span class="wrap-anywhere">Contact {idOrEmail}</span>}
      </PageHeading>
      {missing ? (
        <Empty title={`No contact ${idOrEmail.includes('@') ? 'with this address' : 'with this id'}.`}>
          <p>
            It may have been deleted, or never added: <a href="#/contacts">add it on the Contacts page</a>.
          </p>
        </Empty>
      ) : (
        <ErrorNote error={contact.error} />
      )}
      {!c && contact.loading && <Loading />}
      {c && (
        <>
          <dl class="fields">
            <dt>Email</dt>
            <dd>
              <Address value={c.email} />
            </dd>
            <dt>Name</dt>
            <dd>{fullName(c) || <span class="muted">—</span>}</dd>
            <dt>Subscription</dt>
            <dd>
              <Subscribed unsubscribed={c.unsubscribed} />{' '}
              {c.unsubscribed && (
                <span class="muted">no email with a topic, and no broadcast, reaches it</span>
              )}
            </dd>
            <dt>Created</dt>
            <dd>
              <When at={c.created_at} />
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{c.id}</code>
            </dd>
          </dl>
          <EditContact contact={c} onSaved={contact.reload} />
          <Properties properties={c.properties} />
          <ContactSegmentList idOrEmail={c.id} />
          <ContactTopicChoices idOrEmail={c.id} />
          <DeleteContact contact={c} />
        </>
      )}
    </>
  );
}

function EditContact({ contact, onSaved }: { contact: Contact; onSaved: () => void }) {
  const [first, setFirst] = useState(contact.first_name ?? '');
  const [last, setLast] = useState(contact.last_name ?? '');
  const [unsubscribed, setUnsubscribed] = useState(contact.unsubscribed);
  const action = useAction(onSaved);
  return (
    <section aria-labelledby="edit-contact">
      <h2 id="edit-contact">Details</h2>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          action.run(
            () =>
              api(path(contact.id), {
                method: 'PATCH',
                body: { first_name: first.trim(), last_name: last.trim(), unsubscribed },
                what: 'contacts',
              }),
            'Saved.',
          );
        }}
      >
        <div>
          <label for="contact-first-name">First name</label>
          <input
            id="contact-first-name"
            autocomplete="off"
            value={first}
            onInput={(e) => setFirst((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div>
          <label for="contact-last-name">Last name</label>
          <input
            id="contact-last-name"
            autocomplete="off"
            value={last}
            onInput={(e) => setLast((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div>
          <label class="check">
            <input
              type="checkbox"
              checked={unsubscribed}
              onChange={(e) => setUnsubscribed((e.currentTarget as HTMLInputElement).checked)}
              aria-describedby="contact-unsubscribed-help"
            />{' '}
            Unsubscribed from everything
          </label>
          <p id="contact-unsubscribed-help" class="muted">
            Global: whatever its topics say, no email with a topic and no broadcast reaches it. Emails without
            a topic still do.
          </p>
        </div>
        <div>
          <button type="submit" disabled={action.busy}>
            Save
          </button>
        </div>
      </form>
      <ActionNotes action={action} />
    </section>
  );
}

function Properties({ properties }: { properties: Contact['properties'] }) {
  const entries = Object.entries(properties ?? {});
  return (
    <section aria-labelledby="contact-properties">
      <h2 id="contact-properties">Properties</h2>
      {entries.length === 0 ? (
        <p class="muted">
          No property set. Values are set with <code>PATCH /v1/contacts/{'{id}'}</code> (
          <code>{'{"properties": {"plan": "pro"}}'}</code>), for properties defined with{' '}
          <code>POST /v1/contact-properties</code>.
        </p>
      ) : (
        <Table columns={['Key', 'Value']} caption="The contact's properties" captionClass="visually-hidden">
          {entries.map(([key, value]) => (
            <tr key={key}>
              <td>
                <code>{key}</code>
              </td>
              <td class="wrap-anywhere">{String(value)}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

function ContactSegmentList({ idOrEmail }: { idOrEmail: string }) {
  const list = useLoad(
    () =>
      api<ContactSegments>(`${path(idOrEmail, 'segments')}${query({ limit: 100 })}`, {
        what: "the contact's segments",
      }),
    [idOrEmail],
  );
  const action = useAction(list.reload);
  return (
    <section aria-labelledby="contact-segments">
      <h2 id="contact-segments">Segments</h2>
      <ActionNotes action={action} />
      <List
        list={list}
        quiet
        empty={{ title: 'In no segment.' }}
        more="Only the newest 100 are listed."
        columns={['Segment', 'Added', { label: 'Actions', hidden: true }]}
        row={(segment) => (
          <tr>
            <td>
              <a href={href('segments', segment.id)}>{segment.name}</a>
            </td>
            <td>
              <When at={segment.created_at} />
            </td>
            <td>
              <ConfirmAction
                label="Remove"
                confirmLabel="Remove"
                small
                busy={action.busy}
                question={`Take the contact out of ${segment.name}? The contact and the segment stay.`}
                onConfirm={() =>
                  action.run(
                    () =>
                      api(path(idOrEmail, 'segments', segment.id), { method: 'DELETE', what: 'segments' }),
                    `Removed from ${segment.name}.`,
                  )
                }
              />
            </td>
          </tr>
        )}
      />
      {list.data && (
        <AddToSegment
          busy={action.busy}
          member={new Set(list.data.data.map((s) => s.id))}
          onAdd={(segment) =>
            action.run(
              () => api(path(idOrEmail, 'segments', segment.id), { method: 'POST', what: 'segments' }),
              `Added to ${segment.name}.`,
            )
          }
        />
      )}
    </section>
  );
}

function AddToSegment({
  member,
  busy,
  onAdd,
}: {
  member: ReadonlySet<string>;
  busy: boolean;
  onAdd: (segment: { id: string; name: string }) => unknown;
}) {
  const segments = useLoad(
    () => api<Segments>(`/v1/segments${query({ limit: 100 })}`, { what: 'the segments' }),
    [],
  );
  const [chosen, setChosen] = useState('');
  const others = (segments.data?.data ?? []).filter((s) => !member.has(s.id));
  if (segments.error) return <ErrorNote error={segments.error} />;
  if (!segments.data) return null;
  if (others.length === 0)
    return (
      <p class="muted">
        {segments.data.data.length === 0 ? 'No segment yet: ' : 'In every segment: '}
        <a href="#/segments">
          make {segments.data.data.length === 0 ? 'one' : 'another'} on the Segments page
        </a>
        .
      </p>
    );
  const segment = others.find((s) => s.id === chosen) ?? others[0];
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        if (segment) onAdd(segment);
      }}
    >
      <div>
        <label for="add-to-segment">Add to segment</label>
        <select
          id="add-to-segment"
          value={segment?.id}
          onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value)}
        >
          {others.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </div>
      <div>
        <button type="submit" disabled={busy}>
          Add
        </button>
      </div>
    </form>
  );
}

const SUBSCRIBED: Subscription = 'opt_in';
const UNSUBSCRIBED: Subscription = 'opt_out';

/** Each topic with a box, checked when the contact gets its emails; Save sends the changed ones only. */
function ContactTopicChoices({ idOrEmail }: { idOrEmail: string }) {
  const topics = useLoad(
    () =>
      api<ContactTopics>(`${path(idOrEmail, 'topics')}${query({ limit: 100 })}`, {
        what: "the contact's topics",
      }),
    [idOrEmail],
  );
  const action = useAction(topics.reload);
  const [changed, setChanged] = useState<Record<string, Subscription>>({});
  const choice = (topic: ContactTopic) => changed[topic.id] ?? topic.subscription;
  const save = () =>
    action.run(async () => {
      const edits = Object.entries(changed)
        .filter(
          ([id, subscription]) => topics.data?.data.find((t) => t.id === id)?.subscription !== subscription,
        )
        .map(([id, subscription]) => ({ id, subscription }));
      if (edits.length)
        await api(path(idOrEmail, 'topics'), { method: 'PATCH', body: { topics: edits }, what: 'topics' });
      setChanged({});
    }, 'Topics saved.');
  return (
    <section aria-labelledby="contact-topics">
      <h2 id="contact-topics">Topics</h2>
      <ErrorNote error={topics.error} />
      {topics.data && topics.data.data.length === 0 && (
        <p class="muted">
          No topic yet: <a href="#/topics">make one on the Topics page</a>.
        </p>
      )}
      {topics.data && topics.data.data.length > 0 && (
        <form
          class="stack"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <fieldset>
            <legend>Gets emails about</legend>
            <ul class="checks topics">
              {topics.data.data.map((topic) => (
                <li key={topic.id}>
                  <label class="check">
                    <input
                      type="checkbox"
                      checked={choice(topic) === SUBSCRIBED}
                      onChange={(e) =>
                        setChanged((now) => ({
                          ...now,
                          [topic.id]: (e.currentTarget as HTMLInputElement).checked
                            ? SUBSCRIBED
                            : UNSUBSCRIBED,
                        }))
                      }
                    />{' '}
                    {topic.name}
                  </label>{' '}
                  <Status value={choice(topic)} />
                  {topic.description && <div class="muted">{topic.description}</div>}
                </li>
              ))}
            </ul>
          </fieldset>
          <div>
            <button type="submit" disabled={action.busy || Object.keys(changed).length === 0}>
              Save topics
            </button>
          </div>
        </form>
      )}
      {topics.data?.has_more && <p class="muted">Only the first 100 topics are listed.</p>}
      <ActionNotes action={action} />
    </section>
  );
}

function DeleteContact({ contact }: { contact: Contact }) {
  const action = useAction();
  return (
    <section aria-labelledby="delete-contact">
      <h2 id="delete-contact">Delete</h2>
      <ConfirmAction
        label="Delete contact"
        confirmLabel="Delete"
        busy={action.busy}
        question={`Delete the contact ${contact.email}, with its segments and topic choices? Its emails stay.`}
        onConfirm={() =>
          action.run(async () => {
            await api(path(contact.id), { method: 'DELETE', what: 'contacts' });
            location.hash = '#/contacts';
          })
        }
      />
      <ActionNotes action={action} />
    </section>
  );
}
