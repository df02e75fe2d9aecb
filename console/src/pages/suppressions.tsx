import { useState } from 'preact/hooks';
import { SUPPRESSION_ORIGINS } from '../../../functions/suppressions/ports.js';
import type { Suppressions } from '../answers.js';
import { api, query } from '../api.js';
import { Address, ErrorNote, PageHeading, restricted, Status, When } from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import '../lists.css';
import { List, usePagedList } from '../list.js';

const PAGE_SIZE = 20;

export function SuppressionsPage() {
  const list = usePagedList(
    (origin, cursor) =>
      api<Suppressions>(`/v1/suppressions${query({ limit: PAGE_SIZE, origin, ...cursor })}`, {
        what: 'the suppression list',
      }),
    [],
  );
  const origin = list.filter;
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState('');
  const act = async (request: () => Promise<unknown>, said: string): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    setDone('');
    try {
      await request();
      setDone(said);
      list.reload();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <PageHeading>Suppressions</PageHeading>
      <p class="muted">
        Addresses the service no longer sends to: those that bounced for good or complained, and those added
        by hand. A send to them leaves them out, marked <code>suppressed</code>.
      </p>
      {!restricted(list.error) && (
        <AddAddress busy={busy} onAdd={(email) => act(() => addAddress(email), `${email} is suppressed.`)} />
      )}
      {done && (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      <ErrorNote error={error} />
      <h2>Suppressed addresses</h2>
      <List
        list={list}
        filter={{ id: 'origin-filter', label: 'Origin', any: 'Any origin', values: SUPPRESSION_ORIGINS }}
        empty={{
          title: origin ? `No address suppressed by ${origin}.` : 'No address is suppressed.',
          help: !origin && (
            <p>
              A hard bounce or a complaint adds the address by itself. Add one by hand above, or with the API:
              <pre>{`curl ${location.origin}/v1/suppressions -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' -d '{"email":"someone@example.com"}'`}</pre>
            </p>
          ),
        }}
        columns={['Email', 'Origin', 'Created', { label: 'Actions', hidden: true }]}
        row={(entry) => (
          <tr>
            <td>
              <Address value={entry.email} />
            </td>
            <td>
              <Status value={entry.origin} />
              {entry.source_id && (
                <div class="muted">
                  by <a href={`#/emails/${encodeURIComponent(entry.source_id)}`}>an email</a>
                </div>
              )}
            </td>
            <td>
              <When at={entry.created_at} />
            </td>
            <td>
              <ConfirmAction
                label="Remove"
                confirmLabel="Remove"
                small
                busy={busy}
                question={`Take ${entry.email} off the list (and off SES's)? It will be mailed again.`}
                onConfirm={() =>
                  act(
                    () =>
                      api(`/v1/suppressions/${encodeURIComponent(entry.id)}`, {
                        method: 'DELETE',
                        what: 'the suppression list',
                      }),
                    `${entry.email} is no longer suppressed.`,
                  )
                }
              />
            </td>
          </tr>
        )}
      />
    </>
  );
}

const addAddress = (email: string) =>
  api('/v1/suppressions', { method: 'POST', body: { email }, what: 'the suppression list' });

function AddAddress({ busy, onAdd }: { busy: boolean; onAdd: (email: string) => Promise<boolean> }) {
  const [email, setEmail] = useState('');
  return (
    <section aria-labelledby="add-address">
      <h2 id="add-address">Add address</h2>
      <form
        class="inline"
        onSubmit={async (event) => {
          event.preventDefault();
          if (await onAdd(email.trim())) setEmail('');
        }}
      >
        <div>
          <label for="suppress-email">Email address</label>
          <input
            id="suppress-email"
            type="email"
            required
            autoComplete="off"
            placeholder="someone@example.com"
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Suppress
        </button>
      </form>
    </section>
  );
}
