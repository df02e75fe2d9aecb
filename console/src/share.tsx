import { useState } from 'preact/hooks';
import { api } from './api.js';
import { ErrorNote } from './components.js';

/** The durations offered (Resend's duration strings, as POST /v1/emails/{id}/share takes them). */
const DURATIONS = [
  ['10m', '10 minutes'],
  ['1h', '1 hour'],
  ['1 day', '1 day'],
  ['48h', '48 hours'],
] as const;

/**
 * An email's "Share" button: makes a link (POST /v1/emails/{id}/share) that opens a read-only page
 * of the email without a key until it expires, and shows it to copy.
 */
export function ShareEmail({ id }: { id: string }) {
  const [duration, setDuration] = useState<string>('48h');
  const [link, setLink] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const share = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api<{ url: string }>(`/v1/emails/${encodeURIComponent(id)}/share`, {
        method: 'POST',
        body: { expires_in: duration },
        what: 'emails',
      });
      // The page as this console reaches the service: behind the front door the answer's host is
      // the API's origin, which answers only CloudFront (docs/api.md, "Sharing an email").
      const url = new URL(answer.url);
      setLink(`${location.origin}${url.pathname}`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const label = DURATIONS.find(([value]) => value === duration)?.[1] ?? duration;
  return (
    <section aria-labelledby="share-heading">
      <h2 id="share-heading">Share</h2>
      <div class="actions">
        <div>
          <label for="share-for">Link works for</label>
          <br />
          <select
            id="share-for"
            value={duration}
            onChange={(e) => setDuration((e.currentTarget as HTMLSelectElement).value)}
          >
            {DURATIONS.map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </div>
        <button type="button" disabled={busy} onClick={share}>
          Share
        </button>
      </div>
      <ErrorNote error={error} />
      {link && (
        <div class="share-link">
          <label for="share-link">Share link</label>
          <br />
          <input
            id="share-link"
            class="breakable"
            type="text"
            readOnly
            value={link}
            style={{ width: '100%', maxWidth: '40em' }}
            onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
          />{' '}
          <a href={link} target="_blank" rel="noopener noreferrer">
            Open
          </a>
          <p class="muted">
            Anyone with this link can read this email (not its Bcc, headers or attachments) for {label},
            without a key.
          </p>
        </div>
      )}
    </section>
  );
}
