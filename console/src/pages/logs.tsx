import { STATUS_CLASSES } from '../../../functions/request-logs/status-classes.js';
import type { Log, Logs } from '../answers.js';
import { ApiFailure, api, query } from '../api.js';
import { ErrorNote, Loading, PageHeading, useLoad, When } from '../components.js';
import '../lists.css';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';

/** The status classes to filter by: the API redirects nothing, so no request answered 3xx. */
const CLASSES = STATUS_CLASSES.filter((c) => c !== '3xx');
const PAGE_SIZE = 20;

/** The 404 of a deployment whose request logs are turned off says so: shown as it is, not as a missing page. */
const logsOff = (error: unknown): error is ApiFailure =>
  error instanceof ApiFailure && error.status === 404 && /turned off/i.test(error.message);

export function LogsPage({ id }: { id?: string | undefined }) {
  return id ? <LogPage id={id} /> : <LogList />;
}

function LogList() {
  const list = usePagedList(
    (status, cursor) =>
      api<Logs>(`/v1/logs${query({ limit: PAGE_SIZE, status, ...cursor })}`, { what: 'the request logs' }),
    [],
  );
  const status = list.filter;
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
        <List
          list={list}
          filter={{ id: 'status-class', label: 'Status', any: 'Any status', values: CLASSES }}
          tools={
            <button type="button" class="secondary" onClick={list.reload}>
              Refresh
            </button>
          }
          empty={{
            title: status ? `No request answered ${status}.` : 'No request logged yet.',
            help: !status && (
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
                {log.api_key_id ? <code>{log.api_key_id}</code> : <span class="muted">none</span>}
              </td>
              <td class="num nowrap">{log.duration_ms} ms</td>
              <td>
                <When at={log.created_at} />
              </td>
            </tr>
          )}
        />
      )}
    </>
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
              {l.api_key_id ? <code>{l.api_key_id}</code> : <span class="muted">none (no valid key)</span>}
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
