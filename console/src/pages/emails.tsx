import { EMAIL_STATUSES } from '../../../functions/emails/status.js';
import type { Emails } from '../answers.js';
import { api, query } from '../api.js';
import { Addresses, PageHeading, Status, When } from '../components.js';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';

const PAGE_SIZE = 20;
/** The list is asked again this often while it is open. */
const REFRESH_MS = 3000;

export function EmailsPage() {
  const list = usePagedList(
    (status, cursor) =>
      api<Emails>(`/v1/emails${query({ limit: PAGE_SIZE, status, ...cursor })}`, { what: 'the emails' }),
    [],
    REFRESH_MS,
  );
  const status = list.filter;
  return (
    <>
      <PageHeading>Emails</PageHeading>
      <List
        list={list}
        filter={{ id: 'status-filter', label: 'Status', any: 'Any status', values: EMAIL_STATUSES }}
        tools={
          <p class="muted" aria-live="off">
            Refreshed every {REFRESH_MS / 1000} seconds while open.
          </p>
        }
        empty={{
          title: status ? `No ${status} email.` : 'No email yet.',
          help: !status && (
            <p>
              Send one with the API: <code>POST /v1/emails</code> with a key, from an address of a verified
              domain (see <a href="#/domains">Domains</a>):
              <pre>{`curl ${location.origin}/v1/emails -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d '{"from":"you@your-domain","to":"success@simulator.amazonses.com","subject":"Hi","text":"Hello"}'`}</pre>
            </p>
          ),
        }}
        columns={['To', 'Subject', 'Status', 'Last event', 'Created']}
        row={(email) => (
          <tr>
            <td>
              <Addresses values={email.to} />
            </td>
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
        )}
      />
    </>
  );
}
