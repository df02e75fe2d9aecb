import { useState } from 'preact/hooks';
import { EMAIL_STATUSES } from '../../../functions/emails/status.js';
import type { Emails } from '../answers.js';
import { api, query } from '../api.js';
import { Empty, ErrorNote, Loading, PageHeading, restricted, Status, useLoad, When } from '../components.js';
import { type PageCursor, Pager, pagerState } from '../pager.js';
import { href } from '../router.js';

const PAGE_SIZE = 20;
/** The list is asked again this often while it is open. */
const REFRESH_MS = 3000;

export function EmailsPage() {
  const [status, setStatus] = useState('');
  const [cursor, setCursor] = useState<PageCursor>();
  const list = useLoad(
    () => api<Emails>(`/v1/emails${query({ limit: PAGE_SIZE, status, ...cursor })}`, { what: 'the emails' }),
    [status, cursor && JSON.stringify(cursor)],
    REFRESH_MS,
  );
  const data = list.data?.data ?? [];
  return (
    <>
      <PageHeading>Emails</PageHeading>
      {!restricted(list.error) && (
        <div class="toolbar">
          <div>
            <label for="status-filter">Status</label>
            <select
              id="status-filter"
              value={status}
              onChange={(e) => {
                setStatus((e.currentTarget as HTMLSelectElement).value);
                setCursor(undefined);
              }}
            >
              <option value="">Any status</option>
              {EMAIL_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
          <p class="muted" aria-live="off">
            Refreshed every {REFRESH_MS / 1000} seconds while open.
          </p>
        </div>
      )}
      <ErrorNote error={list.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && data.length === 0 && (
        <Empty title={status ? `No ${status} email.` : 'No email yet.'}>
          {!status && (
            <p>
              Send one with the API: <code>POST /v1/emails</code> with a key, from an address of a verified
              domain (see <a href="#/domains">Domains</a>):
              <pre>{`curl ${location.origin}/v1/emails -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d '{"from":"you@your-domain","to":"success@simulator.amazonses.com","subject":"Hi","text":"Hello"}'`}</pre>
            </p>
          )}
        </Empty>
      )}
      {data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">To</th>
                <th scope="col">Subject</th>
                <th scope="col">Status</th>
                <th scope="col">Last event</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.map((email) => (
                <tr key={email.id}>
                  <td>{email.to.join(', ')}</td>
                  <td>
                    <a href={href('emails', email.id)}>{email.subject || '(no subject)'}</a>
                  </td>
                  <td>
                    <Status value={email.status} />
                  </td>
                  <td>
                    <Status value={email.last_event} />
                  </td>
                  <td>
                    <When at={email.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager {...pagerState(list.data, cursor)} onPage={setCursor} />
    </>
  );
}
