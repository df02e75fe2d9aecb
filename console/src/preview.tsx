import { useState } from 'preact/hooks';

/**
 * An email's HTML (sent or received: both are hostile) in a frame that may do nothing: `sandbox=""` (no script, no same origin, no
 * form, no navigation of the console) and a policy of its own in front of the HTML, which keeps
 * remote images (tracking pixels) off until asked.
 */
export function Preview({ html }: { html: string }) {
  const [remote, setRemote] = useState(false);
  const policy = `default-src 'none'; img-src data:${remote ? ' https:' : ''}; style-src 'unsafe-inline'`;
  const srcdoc = `<meta http-equiv="Content-Security-Policy" content="${policy}">${html}`;
  return (
    <>
      <div class="actions">
        <button type="button" class="secondary" disabled={remote} onClick={() => setRemote(true)}>
          Load remote images
        </button>
        <span class="muted">
          {remote
            ? 'Remote images are on for this view.'
            : 'Remote images are off: loading one tells the sender you opened it.'}
        </span>
      </div>
      <iframe key={String(remote)} class="preview" title="The email's HTML" sandbox="" srcdoc={srcdoc} />
    </>
  );
}
