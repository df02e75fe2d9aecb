import type { ComponentChildren } from 'preact';
import { EMAIL_STATUSES } from '../../../functions/emails/status.js';
import type { Emails } from '../answers.js';
import { api, query } from '../api.js';
import { Addresses, PageHeading, restricted, Status, When } from '../components.js';
import { FilterSelect, List, usePagedList } from '../list.js';
import { href, useQuery } from '../router.js';

const PAGE_SIZE = 20;
/** The list is asked again this often while it is open. */
const REFRESH_MS = 3000;

/**
 * The filters, kept in the page's URL (`#/emails?recipient=…&status=…&since=…&until=…`), so a search
 * can be shared and reloaded: a recipient (the API's `recipient`, exact and case-insensitive), a
 * status, and the first and last days (the browser's) of a date range.
 */
export function EmailsPage() {
  const [params, setParams] = useQuery();
  const filters = {
    recipient: params.recipient?.trim() || undefined,
    status: params.status || undefined,
    since: params.since || undefined,
    until: params.until || undefined,
  };
  // A new search starts at its first page: the list is a new one for each.
  return (
    <>
      <PageHeading>Emails</PageHeading>
      {/* Its fields are the URL's: made again when the URL changes (back, a shared link). */}
      <EmailList
        key={JSON.stringify(filters)}
        filters={filters}
        search={<EmailSearch filters={filters} onSearch={(next) => setParams({ ...filters, ...next })} />}
      />
    </>
  );
}

type Filters = { recipient?: string; status?: string; since?: string; until?: string };

/** A day's start (`2026-11-28`, the browser's midnight) as an instant, `days` later. */
const dayStart = (day: string, days = 0) => {
  const at = new Date(`${day}T00:00:00`);
  at.setDate(at.getDate() + days);
  return at;
};

/** The API's filters: the range's days whole (after the instant before the first, before the day after the last). */
const apiFilters = ({ recipient, status, since, until }: Filters) => ({
  recipient,
  status,
  created_after: since ? new Date(dayStart(since).getTime() - 1).toISOString() : undefined,
  created_before: until ? dayStart(until, 1).toISOString() : undefined,
});

function EmailSearch({ filters, onSearch }: { filters: Filters; onSearch: (next: Filters) => void }) {
  const field = (form: HTMLFormElement, name: string) =>
    (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value.trim() || undefined;
  return (
    <search aria-label="Emails">
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          onSearch({
            recipient: field(form, 'recipient'),
            status: field(form, 'status'),
            since: field(form, 'since'),
            until: field(form, 'until'),
          });
        }}
      >
        <div>
          <label for="email-search">Search</label>
          <input
            id="email-search"
            name="recipient"
            type="search"
            placeholder="Recipient's address"
            autocomplete="off"
            defaultValue={filters.recipient ?? ''}
            aria-describedby="email-search-help"
          />
        </div>
        <FilterSelect
          filter={{ id: 'status-filter', label: 'Status', any: 'Any status', values: EMAIL_STATUSES }}
          name="status"
          value={filters.status ?? ''}
          onChange={(v) => onSearch({ status: v || undefined })}
        />
        <div>
          <label for="since-filter">From</label>
          <input id="since-filter" name="since" type="date" defaultValue={filters.since ?? ''} />
        </div>
        <div>
          <label for="until-filter">Until</label>
          <input id="until-filter" name="until" type="date" defaultValue={filters.until ?? ''} />
        </div>
        <div>
          <button type="submit">Search</button>
        </div>
        <p id="email-search-help" class="muted">
          A recipient's whole address (To, Cc or Bcc, any case). The search is in the URL: share or reload it.
        </p>
      </form>
    </search>
  );
}

/** The list, and above it the search (not for a key that may not read emails: only the refusal). */
function EmailList({ filters, search }: { filters: Filters; search: ComponentChildren }) {
  const list = usePagedList(
    (_, cursor) =>
      api<Emails>(`/v1/emails${query({ limit: PAGE_SIZE, ...apiFilters(filters), ...cursor })}`, {
        what: 'the emails',
      }),
    [],
    REFRESH_MS,
  );
  const { status, recipient, since, until } = filters;
  const searching = Boolean(recipient || since || until);
  return (
    <>
      {!restricted(list.error) && search}
      <List
        list={list}
        tools={
          <p class="muted" aria-live="off">
            Refreshed every {REFRESH_MS / 1000} seconds while open.
          </p>
        }
        empty={{
          title: recipient
            ? `No ${status ? `${status} ` : ''}email to ${recipient}${since || until ? ' in these days' : ''}.`
            : searching
              ? `No ${status ? `${status} ` : ''}email in these days.`
              : status
                ? `No ${status} email.`
                : 'No email yet.',
          help: !status && !searching && (
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
