import { useState } from 'preact/hooks';
import { EMITTED_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../../functions/webhooks/event-types.js';
import type { Webhook, WebhookMessage, WebhookMessages, WebhookSecret, Webhooks } from '../answers.js';
import { ApiFailure, api, query } from '../api.js';
import {
  CopyButton,
  ErrorNote,
  Loading,
  PageHeading,
  restricted,
  Status,
  useLoad,
  When,
} from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import { href } from '../router.js';
import '../lists.css';
import { List, usePagedList } from '../list.js';

type EventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
/** Types Resend takes in a subscription that this service never sends. */
const NEVER_SENT_TYPES = SUBSCRIBABLE_EVENT_TYPES.filter(
  (type) => !(EMITTED_EVENT_TYPES as readonly string[]).includes(type),
);

/** The messages of an open webhook page are asked again this often. */
const REFRESH_MS = 3000;
const PAGE_SIZE = 20;

const path = (id: string, ...rest: string[]) =>
  `/v1/webhooks/${[id, ...rest].map(encodeURIComponent).join('/')}`;

export function WebhooksPage({ id }: { id?: string | undefined }) {
  return id ? <WebhookPage id={id} /> : <WebhookList />;
}

function WebhookList() {
  const list = useLoad(
    () => api<Webhooks>(`/v1/webhooks${query({ limit: 100 })}`, { what: 'the webhooks' }),
    [],
  );
  return (
    <>
      <PageHeading>Webhooks</PageHeading>
      <p class="muted">
        Endpoints that receive the service's events as they happen, signed as Resend signs them.
      </p>
      <List
        list={list}
        empty={{
          title: 'No webhook yet.',
          help: (
            <>
              <p>
                Add one below, or with the API (the endpoint must be <code>https</code> and public):
              </p>
              <pre>{`curl ${location.origin}/v1/webhooks -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d '{"endpoint":"https://example.com/hooks","events":["email.delivered","email.bounced"]}'`}</pre>
            </>
          ),
        }}
        columns={['Endpoint', 'Events', 'Status', 'Created']}
        row={(hook) => (
          <tr>
            <td>
              <a href={href('webhooks', hook.id)} class="wrap-anywhere">
                {hook.endpoint}
              </a>
            </td>
            <td>{hook.events.join(', ')}</td>
            <td>
              <Status value={hook.status} />
              {hook.status === 'enabled' && hook.paused_until && (
                <>
                  {' '}
                  <Status value="paused" />
                </>
              )}
            </td>
            <td>
              <When at={hook.created_at} />
            </td>
          </tr>
        )}
        more="Only the newest 100 are listed."
      />
      {!restricted(list.error) && <AddWebhook />}
    </>
  );
}

function AddWebhook() {
  const [endpoint, setEndpoint] = useState('');
  const [events, setEvents] = useState<EventType[]>([]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const toggle = (type: EventType, on: boolean) =>
    setEvents((list) => (on ? [...list, type] : list.filter((t) => t !== type)));
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    if (!events.length) {
      setError(
        new ApiFailure(0, 'validation_error', 'Pick at least one event type.', 'Then press Add webhook.'),
      );
      return;
    }
    setBusy(true);
    try {
      const created = await api<WebhookSecret>('/v1/webhooks', {
        method: 'POST',
        body: { endpoint: endpoint.trim(), events },
        what: 'webhooks',
      });
      location.hash = href('webhooks', created.id);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const box = (type: EventType) => (
    <li key={type}>
      <label class="check">
        <input
          type="checkbox"
          checked={events.includes(type)}
          onChange={(e) => toggle(type, (e.currentTarget as HTMLInputElement).checked)}
        />{' '}
        {type}
      </label>
    </li>
  );
  return (
    <section aria-labelledby="add-webhook">
      <h2 id="add-webhook">Add webhook</h2>
      <form class="stack" onSubmit={submit}>
        <div>
          <label for="webhook-endpoint">Endpoint URL</label>
          <input
            id="webhook-endpoint"
            type="url"
            inputMode="url"
            required
            placeholder="https://example.com/hooks"
            value={endpoint}
            onInput={(e) => setEndpoint((e.currentTarget as HTMLInputElement).value)}
            aria-describedby="webhook-endpoint-help"
          />
          <p id="webhook-endpoint-help" class="muted">
            <code>https</code>, resolving to public addresses only (locally, <code>http://localhost</code> is
            allowed too).
          </p>
        </div>
        <fieldset>
          <legend>Events</legend>
          <div class="actions">
            <button type="button" class="secondary small" onClick={() => setEvents([...EMITTED_EVENT_TYPES])}>
              Select every event sent
            </button>
            <button type="button" class="secondary small" onClick={() => setEvents([])}>
              Clear
            </button>
          </div>
          <ul class="checks">{EMITTED_EVENT_TYPES.map(box)}</ul>
          <details>
            <summary>Types Resend takes that this service never sends</summary>
            <ul class="checks">{NEVER_SENT_TYPES.map(box)}</ul>
          </details>
        </fieldset>
        <div>
          <button type="submit" disabled={busy}>
            Add webhook
          </button>
        </div>
      </form>
      <ErrorNote error={error} />
    </section>
  );
}

function WebhookPage({ id }: { id: string }) {
  const hook = useLoad(() => api<Webhook>(path(id), { what: 'webhooks' }), [id]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [revealed, setRevealed] = useState(false);
  const [rotated, setRotated] = useState(false);
  const act = async (request: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await request();
      hook.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const h = hook.data;
  return (
    <>
      <p>
        <a href="#/webhooks">← Webhooks</a>
      </p>
      <PageHeading>
        <span class="wrap-anywhere">{h ? h.endpoint : `Webhook ${id}`}</span>
      </PageHeading>
      <ErrorNote error={hook.error} />
      {!h && hook.loading && <Loading />}
      {h && (
        <>
          <dl class="fields">
            <dt>Endpoint</dt>
            <dd class="wrap-anywhere">{h.endpoint}</dd>
            <dt>Events</dt>
            <dd>{h.events.join(', ')}</dd>
            <dt>Status</dt>
            <dd>
              <Status value={h.status} />
            </dd>
            {h.disabled_reason && (
              <>
                <dt>Why disabled</dt>
                <dd>{h.disabled_reason}</dd>
              </>
            )}
            {h.status === 'enabled' && h.paused_until && (
              <>
                <dt>Paused until</dt>
                <dd>
                  <When at={h.paused_until} /> <Status value="paused" />{' '}
                  <span class="muted">
                    its attempts failed in a row: its events are kept and delivered, oldest first, once a
                    probe after this time succeeds
                  </span>
                </dd>
              </>
            )}
            {h.failing_since && (
              <>
                <dt>Failing since</dt>
                <dd>
                  <When at={h.failing_since} />{' '}
                  <span class="muted">no attempt succeeded since; after 3 days it is disabled</span>
                </dd>
              </>
            )}
            <dt>Created</dt>
            <dd>
              <When at={h.created_at} />
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{h.id}</code>
            </dd>
          </dl>
          <div class="actions">
            <button
              type="button"
              class="secondary"
              disabled={busy}
              onClick={() =>
                act(() =>
                  api(path(id), {
                    method: 'PATCH',
                    body: { status: h.status === 'enabled' ? 'disabled' : 'enabled' },
                    what: 'webhooks',
                  }),
                )
              }
            >
              {h.status === 'enabled' ? 'Disable' : 'Enable'}
            </button>
          </div>
          <ErrorNote error={error} />

          <h2>Signing secret</h2>
          {revealed ? (
            <div class="actions secret">
              <code data-testid="signing-secret">{h.signing_secret}</code>
              <CopyButton value={h.signing_secret} label="signing secret" />
              <button type="button" class="secondary small" onClick={() => setRevealed(false)}>
                Hide
              </button>
            </div>
          ) : (
            <div class="actions">
              <button type="button" class="secondary" onClick={() => setRevealed(true)}>
                Reveal signing secret
              </button>
            </div>
          )}
          {rotated && (
            <p class="notice" role="status">
              A new secret is in use. The old one keeps signing beside it for 24 hours, so receivers can
              switch.
            </p>
          )}
          <p class="muted">
            Receivers check each request's <code>webhook-signature</code> with it (Standard Webhooks, as
            Resend signs).
          </p>
          <ConfirmAction
            label="Rotate signing secret"
            confirmLabel="Rotate"
            danger={false}
            busy={busy}
            question="Make a new signing secret? The old one keeps signing beside it for 24 hours, then stops: update your receivers within that time."
            onConfirm={() =>
              act(async () => {
                await api(path(id, 'signing-secret', 'rotate'), { method: 'POST', what: 'webhooks' });
                setRotated(true);
                setRevealed(true);
              })
            }
          />

          <Messages id={id} />

          <h2>Delete</h2>
          <ConfirmAction
            label="Delete webhook"
            confirmLabel="Delete"
            busy={busy}
            question={`Delete the webhook to ${h.endpoint}? It receives nothing more, and its queued messages are dropped.`}
            onConfirm={() =>
              act(async () => {
                await api(path(id), { method: 'DELETE', what: 'webhooks' });
                location.hash = '#/webhooks';
              })
            }
          />
        </>
      )}
    </>
  );
}

function Messages({ id }: { id: string }) {
  const list = usePagedList(
    (_, cursor) =>
      // Each message with its newest attempts: one request for the page, not one per message.
      api<WebhookMessages>(
        `${path(id, 'events')}${query({ limit: PAGE_SIZE, include: 'attempts', ...cursor })}`,
        {
          what: "the webhook's messages",
        },
      ),
    [id],
    REFRESH_MS,
  );
  return (
    <section aria-labelledby="messages-heading">
      <h2 id="messages-heading">Messages sent</h2>
      <p class="muted">Refreshed every {REFRESH_MS / 1000} seconds while open. Newest first.</p>
      <List
        list={list}
        empty={{
          title: 'No message yet.',
          help: (
            <p>
              Events it subscribes to arrive here as they happen: send an email (see{' '}
              <a href="#/emails">Emails</a>) and its events follow within seconds.
            </p>
          ),
        }}
        entriesClass="messages"
        entries={(message) => <MessageEntry hookId={id} message={message} onReplayed={list.reload} />}
      />
    </section>
  );
}

function MessageEntry({
  hookId,
  message,
  onReplayed,
}: {
  hookId: string;
  message: WebhookMessage;
  onReplayed: () => void;
}) {
  // Its newest attempts came with it (include=attempts), refreshed with the list.
  const recent = message.recent_attempts ?? [];
  const attempts = {
    data: { data: recent, has_more: message.attempts > recent.length },
    error: undefined,
    loading: false,
    reload: onReplayed,
  };
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [replayed, setReplayed] = useState(false);
  const replay = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api(path(hookId, 'events', message.id, 'replay'), { method: 'POST', what: 'webhooks' });
      setReplayed(true);
      onReplayed();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="message" data-message-id={message.id}>
      <div class="message-head">
        <strong>{message.type}</strong> <When at={message.created_at} /> <Status value={message.status} />{' '}
        <span class="muted">
          {message.attempts} attempt{message.attempts === 1 ? '' : 's'}
          {message.next_attempt_at && (
            <>
              , next <When at={message.next_attempt_at} />
            </>
          )}
        </span>
        <button
          type="button"
          class="secondary small"
          disabled={busy}
          aria-label={`Replay ${message.type} message ${message.id}`}
          onClick={replay}
        >
          Replay
        </button>
      </div>
      <div class="muted">
        <code>{message.id}</code>
        {replayed && <span role="status"> Replay queued: one more attempt, same message id.</span>}
      </div>
      <ErrorNote error={error} />
      <List
        list={attempts}
        quiet
        more={`Only the newest ${recent.length} attempts are listed.`}
        caption={`Attempts of ${message.id}`}
        captionClass="visually-hidden"
        columns={['Status code', 'Time', { label: 'Duration', class: 'num' }, 'Answer or error']}
        row={(attempt) => (
          <tr>
            <td class={attempt.http_status_code >= 200 && attempt.http_status_code < 300 ? 'ok' : 'over'}>
              {attempt.http_status_code === 0 ? 'no answer' : attempt.http_status_code}
            </td>
            <td>
              <When at={attempt.sent_at} />
            </td>
            <td class="num">{attempt.duration_ms} ms</td>
            <td>
              <code>{attempt.response}</code>
            </td>
          </tr>
        )}
      />
    </li>
  );
}
