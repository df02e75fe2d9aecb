import type { EmailDetail } from './email.js';

/**
 * The page a share link opens (GET /share/{token}): one email, read-only, rendered on the server
 * with no script at all. It shows the subject, sender, To, Cc and Reply-To, when it was sent and
 * its latest event, and its HTML in the console's preview frame (`sandbox=""`: no script, no
 * form, no same origin; remote images off, so opening a link reports no open to the sender) or else its text.
 * It does not show Bcc, custom headers, tags, delivery events or attachments (it says how many
 * attachments were left out): a link is shared with someone outside the account.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page's policy: nothing but inline style (the page's own and the email's, which is styled
 * inline) and `data:` images. No script source at all, no connection, no form, no framing of it.
 * The preview frame is a `srcdoc` document, which inherits this policy (no frame-src governs it).
 */
export const SHARE_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src data:',
  "frame-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The preview frame's own policy in front of the email's HTML: the console's, remote images off. */
export const PREVIEW_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#f6f6f4}
main{max-width:860px;margin:0 auto;padding:24px 16px}
h1{font-size:1.3rem;margin:0 0 12px;overflow-wrap:break-word}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;margin:0 0 16px}
dt{color:#666}dd{margin:0;overflow-wrap:anywhere}
iframe{width:100%;min-height:480px;border:1px solid #ddd;background:#fff}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fff;border:1px solid #ddd;padding:12px}
.muted{color:#666;font-size:.9rem}`;

function shell(title: string, content: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${content}</main></body></html>`;
}

const row = (name: string, values: readonly string[]) =>
  values.length ? `<dt>${name}</dt><dd>${values.map(escapeHtml).join(', ')}</dd>` : '';

/** The shared email's page. `bodiesExpired`: its bodies are past the content bucket's retention. */
export function sharedEmailPage(
  email: EmailDetail,
  expiresAt: Date,
  options: { bodiesExpired?: boolean } = {},
): string {
  const attachments = email.attachments?.length ?? 0;
  const body = email.html
    ? `<iframe title="The email's HTML" sandbox="" srcdoc="${escapeHtml(
        `<meta http-equiv="Content-Security-Policy" content="${PREVIEW_POLICY}">${email.html}`,
      )}"></iframe>`
    : email.text
      ? `<pre>${escapeHtml(email.text)}</pre>`
      : `<p class="muted">${options.bodiesExpired ? 'Its bodies are past their retention: no longer kept.' : 'It has no body.'}</p>`;
  return shell(
    email.subject || '(no subject)',
    `<p class="muted">A shared email (read-only)</p><h1>${escapeHtml(email.subject || '(no subject)')}</h1><dl>${row('From', [email.from])}${row('To', email.to)}${row('Cc', email.cc)}${row('Reply-To', email.reply_to)}${row('Sent', [email.created_at])}${row('Status', [email.last_event])}</dl>${body}${
      attachments
        ? `<p class="muted">${attachments} attachment${attachments === 1 ? '' : 's'} not shown: a share link does not share attachments.</p>`
        : ''
    }<p class="muted">This link stops working at ${escapeHtml(expiresAt.toISOString())}.</p>`,
  );
}

/** The page of a link that opens nothing (unknown, altered or expired), or that is viewed too often. */
export function shareErrorPage(status: 404 | 429 | 500): string {
  const words: Record<typeof status, [string, string]> = {
    404: ['Link not found', 'This share link does not exist or has expired. Ask its sender for a new one.'],
    429: ['Too many views', 'This link was opened too often in the last minute. Try again in a minute.'],
    500: ['Something went wrong', 'The email could not be shown. Try again later.'],
  };
  const [title, text] = words[status];
  return shell(title, `<h1>${title}</h1><p>${text}</p>`);
}
