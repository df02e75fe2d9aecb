import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ActionNotes, useAction } from '../action.js';
import type { Contacts, Segments } from '../answers.js';
import { api, query } from '../api.js';
import { Address, PageHeading, restricted, useLoad, When } from '../components.js';
import '../lists.css';
import { FilterSelect, List, usePagedList } from '../list.js';
import { href, useQuery } from '../router.js';
import { ContactPage, fullName, Subscribed } from './contact.js';

const PAGE_SIZE = 20;

/** `#/contacts` lists them (`?segment=<id>` those of one segment); `#/contacts/<id or address>` is one. */
export function ContactsPage({ id }: { id: string | undefined }) {
  return id ? <ContactPage idOrEmail={id} /> : <ContactList />;
}

function ContactList() {
  const [params, setParams] = useQuery();
  const segment = params.segment || undefined;
  // The segments, by name, for the filter (one request: the newest 100).
  const segments = useLoad(
    () => api<Segments>(`/v1/segments${query({ limit: 100 })}`, { what: 'the segments' }),
    [],
  );
  const names = Object.fromEntries((segments.data?.data ?? []).map((s) => [s.id, s.name]));
  if (segment && !names[segment]) names[segment] = segment;
  // The forms wait for the segments' answer: with a sending-access key the contacts' refusal can come
  // first (the console paces its requests), and a form shown until the second refusal is one it cannot use.
  const writable = !segments.loading && !restricted(segments.error);
  return (
    <>
      <PageHeading>Contacts</PageHeading>
      <p class="muted">
        The people you send to: one contact per address (any case), with its segments, its choices of topics
        and its properties. An email with a <code>topic_id</code> reaches no one who opted out of the topic or
        unsubscribed.
      </p>
      {writable && <FindContact />}
      {/* A new segment starts a new list at its first page. */}
      <ContactRows
        key={segment ?? ''}
        segment={segment}
        filter={
          <FilterSelect
            filter={{
              id: 'segment-filter',
              label: 'Segment',
              any: 'Every contact',
              values: Object.keys(names),
              labels: names,
            }}
            value={segment ?? ''}
            onChange={(value) => setParams({ segment: value || undefined })}
          />
        }
      />
      {writable && <AddContact />}
    </>
  );
}

/** Find by address: the contact's page, which the API finds by address as well as by id. */
function FindContact() {
  const [email, setEmail] = useState('');
  return (
    <search aria-label="Contacts">
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          const address = email.trim();
          if (address) location.hash = href('contacts', address);
        }}
      >
        <div>
          <label for="contact-find">Find by address</label>
          <input
            id="contact-find"
            type="email"
            required
            autocomplete="off"
            placeholder="someone@example.com"
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
            aria-describedby="contact-find-help"
          />
        </div>
        <div>
          <button type="submit">Find</button>
        </div>
        <p id="contact-find-help" class="muted">
          The whole address, in any case: opens its contact.
        </p>
      </form>
    </search>
  );
}

function ContactRows({ segment, filter }: { segment: string | undefined; filter: ComponentChildren }) {
  const list = usePagedList(
    (_, cursor) =>
      api<Contacts>(`/v1/contacts${query({ limit: PAGE_SIZE, segment_id: segment, ...cursor })}`, {
        what: 'the contacts',
      }),
    [],
  );
  return (
    <>
      <h2>{segment ? 'Contacts of the segment' : 'Every contact'}</h2>
      <List
        list={list}
        tools={filter}
        empty={{
          title: segment ? 'No contact in this segment.' : 'No contact yet.',
          help: !segment && (
            <p>
              Add one below, import a CSV with <code>POST /v1/contacts/imports</code>, or create one with the
              API:
              <pre>{`curl ${location.origin}/v1/contacts -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' -d '{"email":"someone@example.com","first_name":"Ada"}'`}</pre>
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
    </>
  );
}

function AddContact() {
  const [email, setEmail] = useState('');
  const [first, setFirst] = useState('');
  const [last, setLast] = useState('');
  const action = useAction();
  const name = (id: string, label: string, value: string, set: (v: string) => void) => (
    <div>
      <label for={id}>{label}</label>
      <input
        id={id}
        autocomplete="off"
        value={value}
        onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
      />
    </div>
  );
  return (
    <section aria-labelledby="add-contact">
      <h2 id="add-contact">Add contact</h2>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          action.run(async () => {
            const created = await api<{ id: string }>('/v1/contacts', {
              method: 'POST',
              body: {
                email: email.trim(),
                ...(first.trim() && { first_name: first.trim() }),
                ...(last.trim() && { last_name: last.trim() }),
              },
              what: 'contacts',
            });
            location.hash = href('contacts', created.id);
          });
        }}
      >
        <div>
          <label for="contact-email">Email address</label>
          <input
            id="contact-email"
            type="email"
            required
            autocomplete="off"
            placeholder="someone@example.com"
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        {name('new-contact-first-name', 'First name', first, setFirst)}
        {name('new-contact-last-name', 'Last name', last, setLast)}
        <div>
          <button type="submit" disabled={action.busy}>
            Add contact
          </button>
        </div>
      </form>
      <ActionNotes action={action} />
    </section>
  );
}
