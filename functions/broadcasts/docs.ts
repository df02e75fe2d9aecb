import { EMAIL_ID, page, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { cursorOf } from './recipients.js';
import type { BROADCAST_RECIPIENT_ROUTES, BROADCAST_ROUTES } from './routes.js';

/** The broadcasts' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

// ---- A broadcast's recipients by type and its clicked links. ----

const CONTACT_ID = '019ac4c8-3a6d-7e20-b4f1-9c8d2e5a7b63';
const PRICING = 'https://acme.test/pricing';

export const BROADCAST_RECIPIENT_DOCS: DocsOf<typeof BROADCAST_RECIPIENT_ROUTES> = {
  'list-broadcast-recipients': {
    ok: 'A page of the recipients of that type.',
    example: page([
      {
        id: cursorOf(`steve@example.com#${EMAIL_ID}`),
        contact_id: CONTACT_ID,
        email: 'steve@example.com',
        count: 2,
        clicked_links: [
          { url: PRICING, clicks: 1 },
          { url: 'https://acme.test/blog', clicks: 1 },
        ],
        email_id: EMAIL_ID,
        created_at: T1,
      },
    ]),
    description:
      "`type` (required): `sent`, `delivered`, `opened`, `clicked`, `bounced`, `complained`, `unsubscribed` (opted out through this broadcast's link) or `suppressed` (left out by the suppression list when its email was to be sent); a recipient is listed under every type it reached, recorded as its email's events arrive. `count` (opened, clicked): how many times; `bounce_type` (bounced; `bounce_type=` filters by it); `clicked_links` (clicked): each link with this recipient's clicks. `email` lists one address's rows only. Sorted by address, in cursor pages: `limit` (1 to 100, default 20), then `after` or `before` a row's `id` (an opaque cursor; no `offset`). `contact_id` is the address's contact now (null when there is none). Ours beside Resend's fields: `email_id` (the recipient's email) and `created_at` (when it first reached this type). Contacts not sent to at all (unsubscribed or opted out before the send) are in no type: the broadcast's `progress.skipped` counts them. 404 when there is no such broadcast.",
  },
  'list-broadcast-clicked-links': {
    ok: "A page of the broadcast's clicked links.",
    example: page([
      { id: cursorOf('LINK#4mVx0p1Q2r3S4t5U6v7W8x'), url: PRICING, clicks: 42, unique_clicks: 30 },
    ]),
    description: `Each link clicked in the broadcast's emails: \`clicks\` (every click) and \`unique_clicks\` (recipients who clicked it, each once). Counted as the clicks arrive: nothing is summed at request time. In cursor pages (\`limit\`, \`after\`, \`before\` a row's opaque \`id\`) in a stable order (by a digest of the url, not by clicks). 404 when there is no such broadcast.`,
  },
};

export const BROADCAST_DOCS: DocsOf<typeof BROADCAST_ROUTES> = {
  ...BROADCAST_RECIPIENT_DOCS,
};
