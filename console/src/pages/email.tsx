import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Attachments, Email, EmailRecipient } from '../answers.js';
import { ApiFailure, api } from '../api.js';
import {
  Address,
  Empty,
  ErrorNote,
  Loading,
  PageHeading,
  Status,
  useLoad,
  When,
  webUrl,
} from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import { Table } from '../list.js';
import { Preview } from '../preview.js';
import { href } from '../router.js';
import { ShareEmail } from '../share.js';

/** Asked again this often while the email waits for its outcome… */
const REFRESH_MS = 3000;
/** …and this often after (opens, clicks and complaints come later). */
const SETTLED_REFRESH_MS = 15_000;

export function EmailPage({ id }: { id: string }) {
  const [settled, setSettled] = useState(false);
  // Asked again while the page is open: often until its outcome, then slower for later events.
  const email = useLoad(
    () => api<Email>(`/v1/emails/${encodeURIComponent(id)}`, { what: 'emails' }),
    [id],
    settled ? SETTLED_REFRESH_MS : REFRESH_MS,
  );
  useEffect(() => {
    if (email.data && email.data.status !== 'queued') setSettled(true);
  }, [email.data]);
  const attachments = useLoad(
    () =>
      api<Attachments>(`/v1/emails/${encodeURIComponent(id)}/attachments`, {
        what: 'attachments',
      }),
    [id],
  );
  const e = email.data;
  return (
    <>
      <p>
        <a href="#/emails">← Emails</a>
      </p>
      <PageHeading>{e ? e.subject || '(no subject)' : `Email ${id}`}</PageHeading>
      <ErrorNote error={email.error} />
      {!e && email.loading && <Loading />}
      {e && (
        <>
          <dl class="fields">
            <dt>Status</dt>
            <dd>
              <Status value={e.status} />
            </dd>
            <dt>Last event</dt>
            <dd>
              <Status value={e.last_event} />
            </dd>
            {e.failure_reason && (
              <>
                <dt>Why</dt>
                <dd>{e.failure_reason}</dd>
              </>
            )}
            <dt>From</dt>
            <dd>{e.from}</dd>
            <dt>To</dt>
            <dd>{e.to.join(', ')}</dd>
            {e.cc?.length ? (
              <>
                <dt>Cc</dt>
                <dd>{e.cc.join(', ')}</dd>
              </>
            ) : null}
            {e.bcc?.length ? (
              <>
                <dt>Bcc</dt>
                <dd>{e.bcc.join(', ')}</dd>
              </>
            ) : null}
            {e.reply_to?.length ? (
              <>
                <dt>Reply to</dt>
                <dd>{e.reply_to.join(', ')}</dd>
              </>
            ) : null}
            <dt>Created</dt>
            <dd>
              <When at={e.created_at} />
            </dd>
            {e.scheduled_at && (
              <>
                <dt>Scheduled for</dt>
                <dd>
                  <When at={e.scheduled_at} />
                </dd>
              </>
            )}
            {e.sent_at && (
              <>
                <dt>Sent</dt>
                <dd>
                  <When at={e.sent_at} />
                </dd>
              </>
            )}
            <dt>Id</dt>
            <dd>
              <code>{e.id}</code>
            </dd>
            {e.template_id && (
              <>
                <dt>Template</dt>
                <dd>
                  <a href={href('templates', e.template_id)}>
                    <code class="id">{e.template_id}</code>
                  </a>
                  {e.template_version_id && (
                    <span class="muted">
                      {' '}
                      version <code class="id">{e.template_version_id}</code>
                    </span>
                  )}
                </dd>
              </>
            )}
            {e.message_id && (
              <>
                <dt>SES message id</dt>
                <dd>
                  <code>{e.message_id}</code>
                </dd>
              </>
            )}
          </dl>
          {e.last_event === 'scheduled' && <Scheduled email={e} onChanged={email.reload} />}
          <ShareEmail id={e.id} />
          <h2>Recipients</h2>
          <Recipients recipients={e.recipients ?? []} />
          <h2>Events</h2>
          {e.events?.length ? (
            <ol class="timeline">
              {e.events.map((event, i) => (
                <li key={`${event.type}-${event.at}-${i}`}>
                  <Status value={event.type} /> <When at={event.at} />
                  {event.automated && <span class="muted"> (likely automated)</span>}
                  {event.recipients?.length ? <div>{event.recipients.join(', ')}</div> : null}
                  {event.detail && <div class="muted">{event.detail}</div>}
                </li>
              ))}
            </ol>
          ) : (
            <p class="muted">No event yet: SES reports what happens to the email here.</p>
          )}
          <h2>HTML</h2>
          {e.html ? (
            <Preview html={e.html} />
          ) : (
            <p class="muted">{e.bodies_expired ? 'Removed by the retention of bodies.' : 'No HTML part.'}</p>
          )}
          <h2>Text</h2>
          {e.text ? (
            <pre>{e.text}</pre>
          ) : (
            <p class="muted">{e.bodies_expired ? 'Removed by the retention of bodies.' : 'No text part.'}</p>
          )}
          <h2>Tags</h2>
          {e.tags?.length ? (
            <dl class="fields">
              {e.tags.map((tag) => (
                <Fragment key={tag.name}>
                  <dt>{tag.name}</dt>
                  <dd>{tag.value}</dd>
                </Fragment>
              ))}
            </dl>
          ) : (
            <p class="muted">No tags.</p>
          )}
          <h2>Headers</h2>
          {e.headers && Object.keys(e.headers).length ? (
            <dl class="fields">
              {Object.entries(e.headers).map(([name, value]) => (
                <Fragment key={name}>
                  <dt>{name}</dt>
                  <dd>{value}</dd>
                </Fragment>
              ))}
            </dl>
          ) : (
            <p class="muted">No custom headers.</p>
          )}
          <h2>Attachments</h2>
          <ErrorNote error={attachments.error} />
          {attachments.data &&
            (attachments.data.data.length ? (
              <ul>
                {attachments.data.data.map((file) => (
                  <li key={file.id}>
                    {webUrl(file.download_url) ? (
                      <a href={webUrl(file.download_url)} target="_blank" rel="noopener noreferrer">
                        {file.filename ?? file.id}
                      </a>
                    ) : (
                      <span>{file.filename ?? file.id} (not fetched yet)</span>
                    )}{' '}
                    <span class="muted">
                      {file.content_type}
                      {file.size !== undefined ? `, ${file.size.toLocaleString()} bytes` : ''}
                    </span>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">No attachments.</p>
            ))}
        </>
      )}
    </>
  );
}

function Recipients({ recipients }: { recipients: EmailRecipient[] }) {
  if (!recipients.length) return <Empty title="No recipient outcome yet." />;
  return (
    <Table columns={['Address', 'Kind', 'Status', 'Last event', 'When', 'What SES said']}>
      {recipients.map((r) => (
        <tr key={`${r.kind}-${r.email}`}>
          <td>
            <Address value={r.email} />
          </td>
          <td>{r.kind}</td>
          <td>
            <Status value={r.status} />
          </td>
          <td>
            <Status value={r.last_event} />
          </td>
          <td>
            <When at={r.at} />
          </td>
          <td>{r.detail ?? ''}</td>
        </tr>
      ))}
    </Table>
  );
}

function Scheduled({ email, onChanged }: { email: Email; onChanged: () => void }) {
  const [when, setWhen] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const act = async (request: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await request();
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="scheduled-heading">
      <h2 id="scheduled-heading">Scheduled</h2>
      <div class="actions">
        <div>
          <label for="reschedule">New time (your time zone)</label>
          <br />
          <input
            id="reschedule"
            type="datetime-local"
            value={when}
            onInput={(e) => setWhen((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            act(async () => {
              const at = new Date(when);
              if (!when || Number.isNaN(at.getTime()))
                throw new ApiFailure(
                  0,
                  'validation_error',
                  'Pick the new date and time first.',
                  'Then press Reschedule.',
                );
              await api(`/v1/emails/${encodeURIComponent(email.id)}`, {
                method: 'PATCH',
                body: { scheduled_at: at.toISOString() },
                what: 'emails',
              });
            })
          }
        >
          Reschedule
        </button>
        <ConfirmAction
          label="Cancel email"
          confirmLabel="Cancel email"
          question="Cancel this email for good? It will not be sent, and cannot be rescheduled."
          busy={busy}
          onConfirm={() =>
            act(() =>
              api(`/v1/emails/${encodeURIComponent(email.id)}/cancel`, { method: 'POST', what: 'emails' }),
            )
          }
        />
      </div>
      <ErrorNote error={error} />
    </section>
  );
}
