import { LOG_METHODS, STATUS_CLASSES } from '../../../functions/request-logs/status-classes.js';
import type { ApiKeys, Log, Logs } from '../answers.js';
import { ApiFailure, api, query } from '../api.js';
import { ErrorNote, Loading, PageHeading, useLoad, When } from '../components.js';
import '../lists.css';
import { FilterSelect, List, usePagedList } from '../list.js';
import { href, hrefWith, useQuery } from '../router.js';

/** The status classes to filter by: the API redirects nothing, so no request answered 3xx. */
const CLASSES = STATUS_CLASSES.filter((c) => c !== '3xx');
const PAGE_SIZE = 20;

/** The 404 of a deployment whose request logs are turned off says so: shown as it is, not as a missing page. */
const logsOff = (error: unknown): error is ApiFailure =>
  error instanceof ApiFailure && error.status === 404 && /turned off/i.test(error.message);

export function LogsPage({ id }: { id?: string | undefined }) {
  return id ? <LogPage id={id} /> : <LogList />;
}

/** The filters the page keeps in its URL (`#/logs?method=POST&path=/v1/emails`), as the API takes them. */
const FILTERS = ['status', 'method', 'path', 'api_key_id'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** The list under the URL's filters: a new search is a new list, from its first page. */
function LogList() {
  const [params, setParams] = useQuery();
  const filters: Filters = Object.fromEntries(
    FILTERS.flatMap((name) => (params[name] ? [[name, params[name]]] : [])),
  );
  return <FilteredLogs key={JSON.stringify(filters)} filters={filters} setFilters={setParams} />;
}

function FilteredLogs({ filters, setFilters }: { filters: Filters; setFilters: (next: Filters) => void }) {
  const list = usePagedList(
    (_, cursor) =>
      api<Logs>(`/v1/logs${query({ limit: PAGE_SIZE, ...filters, ...cursor })}`, {
        what: 'the request logs',
      }),
    [],
  );
  // The keys' names for the Key filter (one request; a restricted or failed read leaves the field out).
  const keys = useLoad(
    () => api<ApiKeys>(`/v1/api-keys${query({ limit: 100 })}`, { what: 'the API keys' }),
    [],
  );
  const status = filters.status;
  const filtered = Object.keys(filters).length > 0;
  const set = (name: keyof Filters, value: string) => setFilters({ ...filters, [name]: value || undefined });
  const lastRead = (list.data as Logs | undefined)?.scanned_to;
  return (
    <>
      <PageHeading>Logs</PageHeading>
      <p class="muted">
        The API's requests, newest first: what each asked and answered, with secrets redacted. Reading the
        logs is not logged.
      </p>
      {logsOff(list.error) ? (
        <div class="notice" role="status">
          <p>
            <strong>{list.error.message}</strong>
          </p>
          <p>Deploy with the requestLogs setting on (the default) to record requests.</p>
        </div>
      ) : (
        <>
          <List
            list={list}
            tools={
              <form
                class="toolbar"
                aria-label="Filter the logs"
                onSubmit={(e) => {
                  e.preventDefault();
                  const path = (
                    (e.currentTarget as HTMLFormElement).elements.namedItem('path') as HTMLInputElement
                  ).value.trim();
                  set('path', path);
                }}
              >
                <FilterSelect
                  filter={{ id: 'status-class', label: 'Status', any: 'Any status', values: CLASSES }}
                  value={status ?? ''}
                  onChange={(v) => set('status', v)}
                />
                <FilterSelect
                  filter={{ id: 'log-method', label: 'Method', any: 'Any method', values: LOG_METHODS }}
                  value={filters.method ?? ''}
                  onChange={(v) => set('method', v)}
                />
                <div>
                  <label for="log-path">Path starts with</label>
                  <input
                    id="log-path"
                    name="path"
                    type="search"
                    placeholder="/v1/emails"
                    defaultValue={filters.path ?? ''}
                  />
                </div>
                {(keys.data || filters.api_key_id) && (
                  <div>
                    <label for="log-key">Key</label>
                    <select
                      id="log-key"
                      value={filters.api_key_id ?? ''}
                      onChange={(e) => set('api_key_id', (e.currentTarget as HTMLSelectElement).value)}
                    >
                      <option value="">Any key</option>
                      {filters.api_key_id && !keys.data?.data.some((k) => k.id === filters.api_key_id) && (
                        <option value={filters.api_key_id}>{filters.api_key_id}</option>
                      )}
                      {keys.data?.data.map((key) => (
                        <option key={key.id} value={key.id}>
                          {key.name}
                        </option>
                      ))}
                    </select>
                  </div>
                )}
                <button type="submit" class="secondary">
                  Search
                </button>
                {filtered && (
                  <a class="button secondary" href={hrefWith({}, 'logs')}>
                    Clear
                  </a>
                )}
                <button type="button" class="secondary" onClick={list.reload}>
                  Refresh
                </button>
              </form>
            }
            empty={{
              title: filtered ? 'No request matches these filters on this page.' : 'No request logged yet.',
              help: !filtered && (
                <p>
                  Every request to the API is logged here within seconds, for example:
                  <pre>{`curl ${location.origin}/v1/domains -H "Authorization: Bearer $API_KEY"`}</pre>
                </p>
              ),
            }}
            columns={['Method', 'Endpoint', 'Status', 'Key', { label: 'Duration', class: 'num' }, 'Time']}
            row={(log) => (
              <tr>
                <td class="nowrap">{log.method}</td>
                <td>
                  <a href={href('logs', log.id)} class="wrap-anywhere">
                    {log.endpoint}
                  </a>
                </td>
                <td class={log.response_status >= 400 ? 'over' : 'ok'}>{log.response_status}</td>
                <td class="nowrap">
                  <KeyName id={log.api_key_id} name={log.api_key_name} />
                </td>
                <td class="num nowrap">{log.duration_ms} ms</td>
                <td>
                  <When at={log.created_at} />
                </td>
              </tr>
            )}
          />
          {lastRead && (
            <p class="muted">
              This search read as many logs as one page may.{' '}
              <button type="button" class="secondary" onClick={() => list.setCursor({ after: lastRead })}>
                Search older logs
              </button>
            </p>
          )}
        </>
      )}
    </>
  );
}

/** A key by its name, its id beside (a deleted key: its id alone). */
function KeyName({ id, name }: { id: string | null; name: string | null }) {
  if (!id) return <span class="muted">none</span>;
  return name ? (
    <span title={id}>
      {name} <code class="muted">{id}</code>
    </span>
  ) : (
    <span>
      <code>{id}</code> <span class="muted">(deleted)</span>
    </span>
  );
}

/** A body as stored (JSON, redacted), pretty-printed as text. */
const pretty = (body: unknown) =>
  body === null || body === undefined ? null : JSON.stringify(body, null, 2);

function LogPage({ id }: { id: string }) {
  const log = useLoad(
    () => api<Log>(`/v1/logs/${encodeURIComponent(id)}`, { what: 'the request logs' }),
    [id],
  );
  const l = log.data;
  const request = pretty(l?.request_body);
  const response = pretty(l?.response_body);
  return (
    <>
      <p>
        <a href="#/logs">← Logs</a>
      </p>
      <PageHeading>
        <span class="wrap-anywhere">{l ? `${l.method} ${l.endpoint}` : `Request ${id}`}</span>
      </PageHeading>
      {logsOff(log.error) ? (
        <p class="notice" role="status">
          {log.error.message}
        </p>
      ) : (
        <ErrorNote error={log.error} />
      )}
      {!l && log.loading && <Loading />}
      {l && (
        <>
          <dl class="fields">
            <dt>Status</dt>
            <dd>{l.response_status}</dd>
            <dt>Time</dt>
            <dd>
              <When at={l.created_at} />
            </dd>
            <dt>Duration</dt>
            <dd>{l.duration_ms} ms</dd>
            <dt>Key</dt>
            <dd>
              {l.api_key_id ? (
                <KeyName id={l.api_key_id} name={l.api_key_name} />
              ) : (
                <span class="muted">none (no valid key)</span>
              )}
            </dd>
            <dt>User agent</dt>
            <dd>{l.user_agent ?? <span class="muted">—</span>}</dd>
            <dt>Id</dt>
            <dd>
              <code>{l.id}</code>
            </dd>
          </dl>
          <h2>Request body</h2>
          {request === null ? <p class="muted">No body.</p> : <pre data-body="request">{request}</pre>}
          <h2>Response body</h2>
          {response === null ? <p class="muted">No body.</p> : <pre data-body="response">{response}</pre>}
          <p class="muted">
            Tokens, signing secrets, attachment contents and download links are stored as{' '}
            <code>"[redacted]"</code>; bodies are kept up to 8 KB each.
          </p>
        </>
      )}
    </>
  );
}
