import { EMAIL_ID, LIST, page, ref, removed, T0, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_BROADCAST_BODY_BYTES } from './model.js';
import { cursorOf } from './recipients.js';
import type { BROADCAST_RECIPIENT_ROUTES, BROADCAST_ROUTES } from './routes.js';

/** The broadcasts' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const BROADCAST_ID = '019ac4e0-7d21-7b4e-9a3c-5f2e8d1b6c07';
const OTHER_BROADCAST_ID = '019ac4df-12ab-7c3d-8e4f-6a7b8c9d0e1f';
const SEGMENT_ID = '019ac4d0-2c5e-7f81-a9b3-4d6e8f0a1c22';
const TOPIC_ID = '019ac4d2-5b7e-7c1a-9f3d-2e8b6a4c0d11';
const CONTACT_ID = '019ac4c8-3a6d-7e20-b4f1-9c8d2e5a7b63';

const HTML =
  '<p>Hi {{{contact.first_name|there}}},</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>';

const STATES =
  'A change its status does not allow is a 403 `validation_error` (as Resend answers it), naming the status.';

const CAN_SEND = `To be sent, a broadcast needs its segment and topic (if any) to exist, html or text, a sender whose domain is verified (as a send: 400 otherwise), and no merge tag that names nothing: \`{{{contact.first_name|fallback}}}\`, \`{{{contact.<property key>}}}\`, the older \`{{{FIRST_NAME}}}\`, \`{{{LAST_NAME}}}\`, \`{{{EMAIL}}}\`, and \`{{{RESEND_UNSUBSCRIBE_URL}}}\` (422 naming the others).`;

/** The broadcasts' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

// ---- A broadcast's recipients by type and its clicked links. ----

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
  'create-broadcast': {
    ok: 'Created.',
    example: ref('broadcast', BROADCAST_ID),
    requestExample: {
      name: 'November news',
      segment_id: SEGMENT_ID,
      from: 'Acme <news@acme.test>',
      subject: 'Hi {{{contact.first_name|there}}}, what is new',
      html: HTML,
      topic_id: TOPIC_ID,
    },
    description: `A draft; with \`send: true\`, sent at once (\`queued\`) or at \`scheduled_at\` (\`scheduled\`; ISO 8601 or English such as "in 1 hour", at most 30 days ahead, as a send takes it). \`scheduled_at\` without \`send: true\` is a 422. \`segment_id\` (or Resend's deprecated \`audience_id\`) must name a segment, \`topic_id\` a topic (400 otherwise). ${CAN_SEND} html and text together may be at most ${MAX_BROADCAST_BODY_BYTES / 1024} KB (ours: 422).`,
  },
  'list-broadcasts': {
    ok: 'A page of broadcasts.',
    example: page([
      {
        id: BROADCAST_ID,
        name: 'November news',
        audience_id: SEGMENT_ID,
        segment_id: SEGMENT_ID,
        status: 'sent',
        created_at: T0,
        sent_at: T1,
        topic_id: TOPIC_ID,
      },
    ]),
    description: `${LIST} Cursors are broadcast ids. A field with no value (\`scheduled_at\` of one sent at once, \`sent_at\` before it is sent) is left out, as Resend's document types these strings.`,
  },
  'get-broadcast': {
    ok: 'The broadcast.',
    example: {
      object: 'broadcast',
      id: BROADCAST_ID,
      name: 'November news',
      audience_id: SEGMENT_ID,
      segment_id: SEGMENT_ID,
      from: 'Acme <news@acme.test>',
      subject: 'Hi {{{contact.first_name|there}}}, what is new',
      reply_to: ['support@acme.test'],
      preview_text: 'Three things we shipped',
      status: 'sending',
      created_at: T0,
      scheduled_at: T1,
      sent_at: T1,
      topic_id: TOPIC_ID,
      html: HTML,
      text: null,
      progress: { created: 1200, skipped: { unsubscribed: 3, opted_out: 12 }, done: false },
      waiting: null,
      totals: {
        sent: 1150,
        delivered: 1100,
        opened: 640,
        unique_opened: 410,
        clicked: 95,
        unique_clicked: 70,
        bounced: 8,
        complained: 1,
        unsubscribed: 4,
        suppressed: 2,
        ended: 0,
      },
    },
    description:
      "Statuses: `draft`, `scheduled`, `queued` (accepted, its fan-out not begun, or waiting: `waiting` says why), `sending`, `sent` (every contact's email made and every one handed to SES or ended), `canceled`. SDK 6.38's type knows `draft`, `queued` and `sent` only. `name`, `preview_text`, `scheduled_at` and `sent_at` are left out while they have no value (Resend's document types them strings). Ours: `progress` (emails made, contacts skipped as unsubscribed or opted out of the topic, whether every page is done; null before the fan-out begins), `waiting` (`quota`: SES's 24-hour quota is used up; `paused`: sending is paused; null when nothing holds it) and `totals` (from counters). The broadcast's emails are emails like any other: `GET /v1/emails` lists them, and their webhooks' `data` carry the `broadcast_id`.",
  },
  'update-broadcast': {
    ok: 'Updated.',
    example: ref('broadcast', BROADCAST_ID),
    requestExample: { subject: 'What is new in November', preview_text: 'Three things we shipped' },
    description: `A draft only (${STATES}). What is given changes, what is left out stays, null removes an optional field (\`topic_id\`, \`reply_to\`, \`preview_text\`, \`html\`, \`text\`, \`name\`). The segment and topic named must exist (400).`,
  },
  'delete-broadcast': {
    ok: 'Deleted.',
    example: removed('broadcast', BROADCAST_ID),
    description: `A draft, or a scheduled broadcast, which cancels it (nothing of it is sent), as Resend's docs say. One queued, sending, sent or canceled is kept: its emails refer to it (403; cancel a queued or sending one instead). ${STATES}`,
  },
  'send-broadcast': {
    ok: 'Sent, or scheduled.',
    example: ref('broadcast', BROADCAST_ID),
    requestExample: { scheduled_at: 'in 1 hour' },
    description: `A draft, now (\`queued\`) or at \`scheduled_at\` (\`scheduled\`; ISO 8601 or English, at most 30 days ahead, as a send takes it). ${CAN_SEND} Each contact of the segment when the fan-out begins gets its own email (a contact added later does not), off the request path; one globally unsubscribed, opted out of the topic or suppressed gets none. ${STATES}`,
  },
  'cancel-broadcast': {
    ok: 'Canceled.',
    example: ref('broadcast', BROADCAST_ID),
    description: `As Resend does: a \`scheduled\` broadcast goes back to \`draft\` (nothing was sent: change it and send it again), a \`queued\` or \`sending\` one is \`canceled\` (what SES already has is sent; no email not yet handed to SES is). ${STATES}`,
  },
  'duplicate-broadcast': {
    ok: 'The new draft.',
    example: ref('broadcast', OTHER_BROADCAST_ID),
    description:
      'A new draft with the same content (name, segment, topic, sender, subject, reply-to, preview text, html and text), whatever the status of the one duplicated.',
  },
  'preview-broadcast': {
    ok: 'The broadcast rendered for the contact.',
    example: {
      object: 'broadcast_preview',
      contact_id: CONTACT_ID,
      email: 'ada@example.com',
      subject: 'Hi Ada, what is new',
      html: '<p>Hi Ada,</p><p><a href="https://mail.acme.test/unsubscribe/preview">Unsubscribe</a></p>',
      text: null,
    },
    requestExample: { contact: 'ada@example.com' },
    description:
      "Ours. `contact`: a contact's id or address (400 when there is none); left out, a contact with no fields, so each tag's fallback shows. Merge tags are filled as the contact's email would have them (values escaped in html). `{{{RESEND_UNSUBSCRIBE_URL}}}` shows `<origin>/unsubscribe/preview`, not a working link: each real email gets its own.",
  },
  ...BROADCAST_RECIPIENT_DOCS,
};
