import { Fragment } from 'preact';
import type { DownloadLink, ReceivedAttachment, ReceivedAttachments, ReceivedEmail } from '../answers.js';
import { api } from '../api.js';
import { Address, Addresses, ErrorNote, Loading, PageHeading, useLoad, When, webUrl } from '../components.js';
import { Preview } from '../preview.js';
import { Verdicts, virusFound } from '../verdicts.js';

/**
 * One received email: two requests (the email, its attachments' links), not asked again: received
 * mail does not change. Its HTML is shown as a sent email's is, in a frame where nothing runs.
 */
export function ReceivedEmailPage({ id }: { id: string }) {
  const path = `/v1/emails/receiving/${encodeURIComponent(id)}`;
  const email = useLoad(() => api<ReceivedEmail>(path, { what: 'received emails' }), [id]);
  const attachments = useLoad(
    () => api<ReceivedAttachments>(`${path}/attachments`, { what: 'received emails' }),
    [id],
  );
  const e = email.data;
  return (
    <>
      <p>
        <a href="#/receiving">← Receiving</a>
      </p>
      <PageHeading>{e ? e.subject || '(no subject)' : `Received email ${id}`}</PageHeading>
      <ErrorNote error={email.error} />
      {!e && email.loading && <Loading />}
      {e && (
        <>
          <h2>Verdicts</h2>
          <Verdicts email={e} />
          {virusFound(e) && (
            <p class="notice" role="note">
              SES found a virus in this message. It is kept, but its raw message and attachments are not
              offered for download unless the operator allows it.
            </p>
          )}
          <dl class="fields">
            <dt>From</dt>
            <dd>
              <Address value={e.from} />
            </dd>
            <dt>To</dt>
            <dd>
              <Addresses values={e.to} />
            </dd>
            <Optional label="Cc" values={e.cc} />
            <Optional label="Bcc" values={e.bcc} />
            <Optional label="Reply to" values={e.reply_to} />
            <dt>Received for</dt>
            <dd>
              <Addresses values={e.received_for} />
            </dd>
            <dt>Received</dt>
            <dd>
              <When at={e.created_at} />
            </dd>
            <dt>Message-ID</dt>
            <dd>
              <code>{e.message_id}</code>
            </dd>
            {e.in_reply_to && (
              <>
                <dt>In reply to</dt>
                <dd>
                  <code>{e.in_reply_to}</code>
                </dd>
              </>
            )}
            {e.references?.length ? (
              <>
                <dt>References</dt>
                <dd>
                  {e.references.map((reference) => (
                    <code key={reference} class="reference">
                      {reference}
                    </code>
                  ))}
                </dd>
              </>
            ) : null}
            <dt>Id</dt>
            <dd>
              <code>{e.id}</code>
            </dd>
          </dl>
          <h2>Raw message</h2>
          <Raw raw={e.raw} virus={virusFound(e)} />
          <h2>HTML</h2>
          {e.html ? <Preview html={e.html} /> : <p class="muted">No HTML part.</p>}
          <h2>Text</h2>
          {e.text ? <pre>{e.text}</pre> : <p class="muted">No text part.</p>}
          <h2>Headers</h2>
          {e.headers && Object.keys(e.headers).length ? (
            <details class="headers">
              <summary>Show the {Object.keys(e.headers).length} headers</summary>
              <dl class="fields">
                {Object.entries(e.headers).map(([name, value]) => (
                  <Fragment key={name}>
                    <dt>{name}</dt>
                    <dd>{value}</dd>
                  </Fragment>
                ))}
              </dl>
            </details>
          ) : (
            <p class="muted">No headers kept.</p>
          )}
          <h2>Attachments</h2>
          <ErrorNote error={attachments.error} />
          {!attachments.data && attachments.loading && <Loading />}
          {attachments.data &&
            (attachments.data.data.length ? (
              <ul class="files">
                {attachments.data.data.map((file) => (
                  <Attachment key={file.id} file={file} virus={virusFound(e)} />
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

function Optional({ label, values }: { label: string; values: string[] | null | undefined }) {
  if (!values?.length) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <Addresses values={values} />
      </dd>
    </>
  );
}

/** Why a file has no link: SES's virus verdict (the operator's setting keeps it), or the API gave none. */
const notOffered = (virus: boolean) =>
  virus ? 'not offered: SES found a virus in this message' : 'no download link was given';

function Raw({ raw, virus }: { raw: DownloadLink | null; virus: boolean }) {
  const url = webUrl(raw?.download_url);
  if (!raw || !url) return <p class="muted">The raw message is {notOffered(virus)}.</p>;
  return (
    <p>
      <a href={url} target="_blank" rel="noopener noreferrer">
        Download the raw message
      </a>{' '}
      <span class="muted">
        (as SES received it; the link works until <When at={raw.expires_at} />, reload the page for a new one)
      </span>
    </p>
  );
}

function Attachment({ file, virus }: { file: ReceivedAttachment; virus: boolean }) {
  const name = file.filename ?? file.content_id ?? file.id;
  const url = webUrl(file.download_url);
  return (
    <li>
      {url ? (
        <a href={url} target="_blank" rel="noopener noreferrer">
          {name}
        </a>
      ) : (
        <span>
          {name} <span class="muted">({notOffered(virus)})</span>
        </span>
      )}{' '}
      <span class="muted">
        {file.content_type}
        {file.content_disposition === 'inline' ? ', inline' : ''}
        {file.size !== undefined ? `, ${file.size.toLocaleString()} bytes` : ''}
      </span>
    </li>
  );
}
