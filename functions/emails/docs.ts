import { ATTACHMENT_ID, EMAIL_ID, LIST, page, ref, T0, T1 } from '../shared/examples.js';
import {
  MAX_BATCH,
  MAX_BATCH_BODY_BYTES,
  MAX_EMAIL_BYTES,
  MAX_SCHEDULE_DAYS,
  MAX_SEND_REQUEST_BYTES,
} from '../shared/limits.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_RECIPIENTS } from './email.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
import type { EMAIL_ROUTES } from './routes.js';

/** The emails' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  description: `The same key and body within 24 hours give the same answer, without sending again; the same key with another body is a 409 (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters).`,
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
};

/** An email as listed. */
export const emailListed = {
  object: 'email',
  id: EMAIL_ID,
  status: 'delivered',
  last_event: 'delivered',
  message_id: '0102019a4f7c2b1e-5d6e7f80-1a2b-4c3d-9e8f-0a1b2c3d4e5f-000000',
  created_at: T0,
  scheduled_at: null,
  from: 'Acme <hello@acme.test>',
  to: ['someone@example.com'],
  cc: [],
  bcc: [],
  reply_to: [],
  subject: 'Your receipt',
};

const attachmentExample = {
  object: 'attachment',
  id: ATTACHMENT_ID,
  filename: 'invoice-2026-11.pdf',
  size: 48213,
  content_type: 'application/pdf',
  content_disposition: 'attachment',
  download_url: `https://content.example-bucket.s3.eu-west-1.amazonaws.com/attachments/${EMAIL_ID}/${ATTACHMENT_ID}?X-Amz-Expires=3600&X-Amz-Signature=5f1c`,
  expires_at: '2026-11-22T05:12:08.402Z',
};

export const EMAIL_DOCS: DocsOf<typeof EMAIL_ROUTES> = {
  'send-email': {
    headers: [IDEMPOTENCY_KEY],
    ok: 'Accepted: stored and queued (or scheduled).',
    example: { id: EMAIL_ID, status: 'queued', created_at: T0 },
    requestExample: {
      from: 'Acme <hello@acme.test>',
      to: ['someone@example.com'],
      subject: 'Your receipt',
      html: '<p>Thank you for your order.</p>',
      tags: [{ name: 'category', value: 'receipt' }],
    },
    description: `At most ${MAX_RECIPIENTS} recipients across to, cc and bcc; a body of at most ${MAX_SEND_REQUEST_BYTES / 1024 / 1024} MiB (larger files by \`path\`); \`scheduled_at\` (ISO 8601, or English such as "in 1 hour") at most ${MAX_SCHEDULE_DAYS} days ahead. The sender's domain must be a verified domain of this service (400 otherwise), and a sending key held to a domain may send only from it (403). Ours beside Resend's answer: \`status\`, \`created_at\` (and \`last_event\`, \`scheduled_at\` when scheduled).`,
  },
  'send-batch': {
    headers: [
      IDEMPOTENCY_KEY,
      {
        name: 'x-batch-validation',
        description:
          '`strict` (the default): one invalid email refuses the whole batch (400, each error named by its position). `permissive`: the valid emails are sent, the others listed in `errors`.',
        schema: { type: 'string', enum: ['strict', 'permissive'], default: 'strict' },
      },
    ],
    ok: "The emails' ids, in input order.",
    example: { data: [{ id: EMAIL_ID }, { id: 'em_01m80mv90eew9ryfvqd1ksnhet' }] },
    requestExample: [
      { from: 'Acme <hello@acme.test>', to: 'ana@example.com', subject: 'Hello Ana', text: 'Hello Ana' },
      {
        from: 'Acme <hello@acme.test>',
        to: ['bo@example.com'],
        template: { id: 'welcome', variables: { NAME: 'Bo' } },
      },
    ],
    description: `1 to ${MAX_BATCH} emails, each checked as \`POST /v1/emails\` checks one (no attachments; each at most ${MAX_EMAIL_BYTES / 1024} KiB; the body at most ${MAX_BATCH_BODY_BYTES / 1024 / 1024} MiB). One request against the key's rate limit.`,
  },
  'list-emails': {
    ok: 'A page of emails.',
    example: page([emailListed]),
    description: `${LIST} \`status\` filters (ours).`,
  },
  'get-email': {
    ok: 'The email, with its bodies, recipients and delivery events.',
    example: {
      ...emailListed,
      html: '<p>Thank you for your order.</p>',
      tags: [{ name: 'category', value: 'receipt' }],
      headers: {},
      sent_at: '2026-11-22T03:29:55.733Z',
      failure_reason: null,
      recipients: [
        {
          email: 'someone@example.com',
          kind: 'to',
          status: 'delivered',
          last_event: 'delivered',
          at: T1,
          detail: '250 2.0.0 OK',
        },
      ],
      events: [
        { type: 'sent', at: '2026-11-22T03:29:55.733Z', recipients: ['someone@example.com'] },
        { type: 'delivered', at: T1, recipients: ['someone@example.com'], detail: '250 2.0.0 OK' },
      ],
    },
    description:
      'Attachments have their own route. Bodies kept in the content store past its retention are left out, with `bodies_expired: true`.',
  },
  'update-email': {
    ok: 'Rescheduled.',
    example: ref('email', EMAIL_ID),
    requestExample: { scheduled_at: '2026-11-23T09:00:00.000Z' },
    description: `Only a scheduled email that still waits (400 once it is being sent, sent or canceled); the new time at most ${MAX_SCHEDULE_DAYS} days ahead.`,
  },
  'cancel-email': {
    ok: 'Canceled (again, if it was already): it ends `failed` with `failure_reason: "canceled"`.',
    example: ref('email', EMAIL_ID),
    description: 'Only a scheduled email that still waits (400 once it is being sent or sent).',
  },
  'list-attachments': {
    ok: "The email's attachments, in the order sent.",
    example: page([attachmentExample]),
    description:
      'All of them when `limit` is absent (as Resend), or a page of `limit` after or before one of them.',
  },
  'get-attachment': {
    ok: 'The attachment, with a download link.',
    example: attachmentExample,
  },
  'share-email': {
    ok: 'The link: `url` opens a read-only page of the email, without a key, until it expires.',
    example: {
      object: 'email',
      id: EMAIL_ID,
      url: 'https://api.example.com/share/3q2-7wWv1F0dXkXoT5b4nYx0s8mZ1cR6uKJ9hLpA2eQ',
    },
    requestExample: { expires_in: '2 hours' },
    description:
      "Resend's share: `expires_in` is a duration such as `10m`, `2 hours` or `1 day` (seconds, minutes, hours or days), 48 hours when absent and at most 48 hours (400 beyond). The body may be left out. The link carries a random token of 256 bits; only its SHA-256 is stored, with the email's id and the expiry, so a link opens that one email and no other, and cannot be made again from the table. A sent email only: a received one cannot be shared. The link's address is the host the request came to (`https://<host>/share/<token>`).",
  },
  'get-shared-email': {
    ok: 'The read-only page of the shared email: subject, From, To, Cc, Reply-To, when it was sent, its latest event, and its HTML in a sandboxed frame (no script, remote images off) or its text. Not its Bcc, headers, tags, events or attachments.',
  },
};
