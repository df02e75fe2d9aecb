import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

/**
 * The page at the viewer port (`Sent mail` in what `npm start` prints): what the local SES
 * received, drawn by the service and not by the emulator package, whose own page put an email's
 * HTML where its scripts ran (an `onerror` handler did). An email's HTML is hostile, so it is shown
 * only as the console shows it (console/src/preview.tsx): in a `srcdoc` frame with `sandbox=""` (no
 * script, no same origin, no form, no navigation of the page) behind a policy of its own that keeps
 * remote images off until asked. The page itself has no script at all: it is drawn on the server,
 * a list and one message at a time (`/?id=<message id>`; `&remote=1` for remote images), and its
 * own policy allows none. Every other path is the emulator's as before: `GET /store` keeps its JSON
 * shape (tools read it), and every answer of the port gets `nosniff` and a policy without script,
 * so no other of its answers (the `.eml` of `/get-emlContent`, an error) runs one either.
 */

const require = createRequire(import.meta.url);

/** An email as the SES emulator stores it (aws-ses-v2-local's `Email`). */
export interface StoredEmail {
  messageId: string;
  from: string;
  replyTo: string[];
  destination: { to: string[]; cc: string[]; bcc: string[] };
  subject: string;
  body: { html?: string; text?: string };
  attachments: { contentType: string; filename?: string; size: number }[];
  headers?: { name: string; value: string }[];
  /** Seconds since the epoch. */
  at: number;
}

/** The emulator's store, read where it keeps it (the same module its routes read). */
const storedEmails = (): readonly StoredEmail[] =>
  (
    require('aws-ses-v2-local/dist/store.js') as {
      getStoreReadonly(): { emails: readonly StoredEmail[] };
    }
  ).getStoreReadonly().emails;

/** The newest emails listed; older ones are still in `/store`. */
export const LISTED = 200;

/**
 * The page's policy: no script, no connection, no form, no framing of it; inline styles (its own,
 * and an email's, whose frame inherits this policy) and images from `data:` and `https:` (the frame
 * narrows them to `data:` until asked). A `srcdoc` frame is governed by no frame-src: none other loads.
 */
export const MAILBOX_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src data: https:',
  "frame-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** What every other answer of the viewer port gets: nothing of it may run or load anything. */
const OTHER_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

/** The email frame's own policy: the console preview's. */
export const framePolicy = (remote: boolean) =>
  `default-src 'none'; img-src data:${remote ? ' https:' : ''}; style-src 'unsafe-inline'`;

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

const when = (at: number) => new Date(at * 1000).toISOString().replace('T', ' ').slice(0, 19);

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1b1f24;color:#fff;padding:12px 20px}header a{color:#fff}
main{max-width:1100px;margin:0 auto;padding:16px 20px}h1{font-size:20px;margin:0}h2{font-size:18px}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #dde1e6;vertical-align:top}
td.addr{overflow-wrap:anywhere}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;background:#fff;padding:12px}
dt{color:#555}dd{margin:0;overflow-wrap:anywhere}pre{white-space:pre-wrap;background:#fff;padding:12px;overflow-wrap:anywhere}
iframe.preview{width:100%;height:480px;border:1px solid #dde1e6;background:#fff}.muted{color:#555}
@media (max-width:600px){thead{display:none}tr,td{display:block}tr{border-bottom:1px solid #dde1e6}td{border:0}}`;

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><header><h1><a href="/">Sent mail</a></h1><span class="muted">what the local SES received; as JSON: <a href="/store">/store</a></span></header>
<main>${body}</main></body></html>`;

const recipients = (email: StoredEmail) =>
  [...email.destination.to, ...email.destination.cc, ...email.destination.bcc].join(', ');

/** The list: the newest emails first, each a link to its page. */
export function listPage(emails: readonly StoredEmail[]): string {
  const newest = [...emails].reverse().slice(0, LISTED);
  const rows = newest
    .map(
      (e) =>
        `<tr><td>${when(e.at)}</td><td class="addr">${escapeHtml(e.from)}</td><td class="addr">${escapeHtml(recipients(e))}</td>` +
        `<td><a href="/?id=${encodeURIComponent(e.messageId)}">${escapeHtml(e.subject || '(no subject)')}</a></td></tr>`,
    )
    .join('');
  const count =
    emails.length > LISTED
      ? `The newest ${LISTED} of ${emails.length} emails.`
      : `${emails.length} email${emails.length === 1 ? '' : 's'}.`;
  return page(
    'Sent mail',
    emails.length === 0
      ? '<p>No email yet. Emails the service sends appear here (reload the page).</p>'
      : `<p class="muted">${count} Reload the page for newer ones.</p><table><thead><tr><th>Received</th><th>From</th><th>To</th><th>Subject</th></tr></thead><tbody>${rows}</tbody></table>`,
  );
}

/** One email: its addresses and headers, its text, its HTML in the sandbox, its attachments named. */
export function messagePage(email: StoredEmail, remote: boolean): string {
  const field = (name: string, value: string) =>
    value ? `<dt>${escapeHtml(name)}</dt><dd>${escapeHtml(value)}</dd>` : '';
  const fields = [
    field('From', email.from),
    field('To', email.destination.to.join(', ')),
    field('Cc', email.destination.cc.join(', ')),
    field('Bcc', email.destination.bcc.join(', ')),
    field('Reply-To', email.replyTo.join(', ')),
    field('Subject', email.subject),
    field('Received', when(email.at)),
    field('Message id', email.messageId),
    ...(email.headers ?? []).map((h) => field(h.name, h.value)),
  ].join('');
  const self = `/?id=${encodeURIComponent(email.messageId)}`;
  const html =
    email.body.html === undefined
      ? ''
      : `<h2>HTML</h2><p class="muted">${
          remote
            ? `Remote images are on for this view (<a href="${self}">off</a>).`
            : `Remote images are off: loading one tells the sender you opened it. <a href="${self}&amp;remote=1">Load remote images</a>`
        }</p><iframe class="preview" title="The email's HTML" sandbox="" srcdoc="${escapeHtml(
          `<meta http-equiv="Content-Security-Policy" content="${framePolicy(remote)}">${email.body.html}`,
        )}"></iframe>`;
  const links = addressesIn(email.body.html ?? '');
  const linkList = links.length
    ? `<h2>Links and images in the HTML</h2><p class="muted">Opened from here, not from the frame (which follows none): a tracked link or pixel goes to the local tracking host, as a reader's click or open would.</p><ul>${links
        .map(
          ({ kind, url }) =>
            `<li>${kind} <a class="addr" href="${escapeHtml(url)}" rel="noopener noreferrer">${escapeHtml(url)}</a></li>`,
        )
        .join('')}</ul>`
    : '';
  const text = email.body.text === undefined ? '' : `<h2>Text</h2><pre>${escapeHtml(email.body.text)}</pre>`;
  const attachments = email.attachments.length
    ? `<h2>Attachments</h2><ul>${email.attachments
        .map(
          (a) =>
            `<li>${escapeHtml(a.filename ?? '(no name)')} <span class="muted">${escapeHtml(a.contentType)}, ${a.size.toLocaleString('en-US')} bytes</span></li>`,
        )
        .join('')}</ul>`
    : '';
  return page(
    email.subject || 'Sent mail',
    `<p><a href="/">All sent mail</a> · <a href="/get-emlContent?messageId=${encodeURIComponent(email.messageId)}">raw message</a></p>` +
      `<h2>${escapeHtml(email.subject || '(no subject)')}</h2><dl>${fields}</dl>${html}${linkList}${text}${attachments}`,
  );
}

/** The most links and images listed for one email. */
const MOST_LINKS = 50;

/** The http(s) addresses of an email's links (`href`) and images (`src`), each once, in order. */
export function addressesIn(html: string): { kind: 'link' | 'image'; url: string }[] {
  const found = new Map<string, 'link' | 'image'>();
  for (const match of html.matchAll(/\b(href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) {
    const url = (match[2] ?? match[3] ?? '').trim().replaceAll('&amp;', '&');
    if (/^https?:\/\//i.test(url) && !found.has(url))
      found.set(url, match[1]?.toLowerCase() === 'src' ? 'image' : 'link');
    if (found.size === MOST_LINKS) break;
  }
  return [...found].map(([url, kind]) => ({ kind, url }));
}

const send = (res: ServerResponse, status: number, body: string, head: boolean) => {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'content-security-policy': MAILBOX_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  res.end(head ? undefined : body);
};

/**
 * Puts the page in front of the emulator's server: `GET /` (and HEAD) is ours; every other request
 * goes to the emulator as before, its answer with `nosniff` and a policy that runs nothing, and its
 * raw message as plain text (the emulator would send it as HTML).
 */
export function serveMailbox(server: Server, emails: () => readonly StoredEmail[] = storedEmails): void {
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && url.pathname === '/') {
      const id = url.searchParams.get('id');
      const all = emails();
      if (id === null) return send(res, 200, listPage(all), req.method === 'HEAD');
      const email = all.find((e) => e.messageId === id);
      if (!email)
        return send(
          res,
          404,
          page('Not found', '<p>No such email. <a href="/">All sent mail</a></p>'),
          req.method === 'HEAD',
        );
      return send(
        res,
        200,
        messagePage(email, url.searchParams.get('remote') === '1'),
        req.method === 'HEAD',
      );
    }
    res.setHeader('x-content-type-options', 'nosniff');
    if (!res.hasHeader('content-security-policy')) res.setHeader('content-security-policy', OTHER_CSP);
    // Express sends a string as HTML unless a type is set: the raw message is text.
    if (url.pathname === '/get-emlContent') res.setHeader('content-type', 'text/plain; charset=utf-8');
    for (const listener of listeners) listener.call(server, req, res);
  });
}
