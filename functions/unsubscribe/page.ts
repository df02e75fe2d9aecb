import type { Preferences } from './preferences.js';

/**
 * The hosted preference page (GET /unsubscribe/{token}), built on the server with no script: the
 * topics the contact may choose (public ones, the private ones it is opted in to, and the link's
 * own), each with its subscription, and a global unsubscribe; one form that POSTs back to the same
 * link. Opening it changes nothing: link scanners fetch it.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Inline style only; forms post to this origin only; no script, no framing, nothing loaded. */
export const UNSUBSCRIBE_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#f6f6f4}
main{max-width:560px;margin:0 auto;padding:24px 16px}
h1{font-size:1.3rem;margin:0 0 8px}
fieldset{border:1px solid #ddd;background:#fff;margin:0 0 12px;padding:12px}
legend{font-weight:600;padding:0 4px}
.desc{color:#555;margin:0 0 6px;font-size:.95rem}
label{display:inline-flex;gap:6px;align-items:center;margin-right:16px;min-height:44px}
button{font:inherit;padding:10px 18px;border-radius:6px;border:1px solid #1a1a1a;background:#1a1a1a;color:#fff;cursor:pointer}
.note{background:#e8f4ea;border:1px solid #9ac7a4;padding:8px 12px;border-radius:6px}
.muted{color:#666;font-size:.9rem;overflow-wrap:anywhere}`;

function shell(title: string, content: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${content}</main></body></html>`;
}

const checked = (on: boolean) => (on ? ' checked' : '');

/** The page: `saved` after the form was posted, `oneClick` after a one-click POST. */
export function preferencesPage(prefs: Preferences, notice?: 'saved' | 'unsubscribed'): string {
  const topics = prefs.topics
    .map(({ topic, subscription }) => {
      const name = `topic.${topic.id}`;
      return `<fieldset><legend>${escapeHtml(topic.name)}</legend>${
        topic.description ? `<p class="desc">${escapeHtml(topic.description)}</p>` : ''
      }<label><input type="radio" name="${escapeHtml(name)}" value="opt_in"${checked(subscription === 'opt_in')}> Subscribed</label><label><input type="radio" name="${escapeHtml(name)}" value="opt_out"${checked(subscription === 'opt_out')}> Unsubscribed</label></fieldset>`;
    })
    .join('');
  const noticeText =
    notice === 'saved'
      ? 'Your preferences are saved.'
      : notice === 'unsubscribed'
        ? prefs.linkTopic
          ? `You are unsubscribed from ${escapeHtml(prefs.linkTopic.name)}.`
          : 'You are unsubscribed from every email.'
        : '';
  return shell(
    'Email preferences',
    `<h1>Email preferences</h1><p class="muted">For ${escapeHtml(prefs.address)}</p>${
      noticeText ? `<p class="note" role="status">${noticeText}</p>` : ''
    }<form method="post"><input type="hidden" name="form" value="preferences">${
      topics || '<p class="muted">There are no topics to choose from.</p>'
    }<fieldset><legend>Every email</legend><label><input type="checkbox" name="unsubscribed"${checked(prefs.unsubscribed)}> Unsubscribe from every email</label></fieldset><button type="submit">Save preferences</button></form>`,
  );
}

/** A link that opens nothing (malformed, altered, forged, or its key retired), or a failure. */
export function unsubscribeErrorPage(status: 404 | 500): string {
  const [title, text] =
    status === 404
      ? ['Link not found', 'This unsubscribe link is not valid. Use the link of a more recent email.']
      : ['Something went wrong', 'Your choice could not be saved. Try again later.'];
  return shell(title, `<h1>${title}</h1><p>${text}</p>`);
}
