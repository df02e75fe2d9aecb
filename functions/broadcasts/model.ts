/**
 * The broadcasts' requests (Resend's bodies, as SDK 6.38 sends them: a field it leaves undefined is
 * dropped by JSON, `reply_to` one address or a list, the deprecated `audience_id` in place of
 * `segment_id`) and how the API shows a broadcast. Statuses and the stored shape: broadcast.ts.
 */
import * as z from 'zod/mini';
import { formatAddress } from '../shared/address.js';
import { address, MAX_SUBJECT_CHARS } from '../shared/email-fields.js';
import { isUuid } from '../shared/ids.js';
import type { Broadcast, BroadcastTotals } from './broadcast.js';

/**
 * A broadcast's html and text together, in bytes (UTF-8): ours. A DynamoDB item is at most 400 KB
 * and the broadcast's item holds both with its other fields and the fan-out's progress.
 */
export const MAX_BROADCAST_BODY_BYTES = 350 * 1024;
/** Resend's dashboard keeps names short; ours: at most this many characters. */
export const MAX_BROADCAST_NAME_CHARS = 200;
/** The preview text (a hidden preheader): at most this many characters (ours). */
export const MAX_PREVIEW_TEXT_CHARS = 500;
/** At most this many reply-to addresses (as an email's). */
export const MAX_BROADCAST_REPLY_TO = 50;

const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

const uuid = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .check(z.refine(isUuid, `${field} must be an id (a UUID) from this service`));

const name = z
  .string({ error: 'name must be a string' })
  .check(
    z.refine(
      (s) => [...s].length <= MAX_BROADCAST_NAME_CHARS,
      `name may be at most ${MAX_BROADCAST_NAME_CHARS} characters`,
    ),
  );
const from = z.pipe(
  address,
  z.transform((parsed) => formatAddress(parsed)),
);
const subject = z.string({ error: 'subject must be a string' }).check(
  z.refine((s) => s.trim().length > 0, 'subject must not be empty'),
  z.refine(
    (s) => [...s].length <= MAX_SUBJECT_CHARS,
    `subject may be at most ${MAX_SUBJECT_CHARS} characters`,
  ),
  z.refine((s) => !/[\r\n]/.test(s), 'subject must not contain line breaks'),
);
/** Resend's document: a list; SDK 6.38's create: one address or a list. */
const replyTo = z
  .pipe(
    z.union([
      z.pipe(
        address,
        z.transform((a) => [a]),
      ),
      z
        .array(address)
        .check(
          z.maxLength(
            MAX_BROADCAST_REPLY_TO,
            `reply_to may list at most ${MAX_BROADCAST_REPLY_TO} addresses`,
          ),
        ),
    ]),
    z.transform((list) => list.map(formatAddress)),
  )
  .register(z.globalRegistry, {
    anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    description: 'One address or a list (`a@b.com` or `Name <a@b.com>`).',
  });
const previewText = z
  .string({ error: 'preview_text must be a string' })
  .check(
    z.maxLength(MAX_PREVIEW_TEXT_CHARS, `preview_text may be at most ${MAX_PREVIEW_TEXT_CHARS} characters`),
  );
const html = z.string({ error: 'html must be a string' });
const text = z.string({ error: 'text must be a string' });

/** The content fields, as create and update take them (null: none; on an update, remove it). */
const content = {
  name: z.optional(z.nullable(name)),
  segment_id: z.optional(uuid('segment_id')),
  audience_id: z.optional(uuid('audience_id')),
  from: z.optional(from),
  subject: z.optional(subject),
  reply_to: z.optional(z.nullable(replyTo)),
  preview_text: z.optional(z.nullable(previewText)),
  html: z.optional(z.nullable(html)),
  text: z.optional(z.nullable(text)),
  topic_id: z.optional(z.nullable(uuid('topic_id'))),
};

/**
 * `POST /v1/broadcasts`: Resend's CreateBroadcastOptions (`from`, `subject`, `segment_id` or the
 * deprecated `audience_id` required); `send: true` sends it at once, or at `scheduled_at` (a time
 * as `POST /v1/emails` takes it: ISO 8601 or English), which without `send: true` is refused.
 */
export const createBroadcastSchema = z.strictObject(
  {
    ...content,
    from,
    subject,
    send: z.optional(z.boolean({ error: 'send must be true or false' })),
    scheduled_at: z.optional(
      z.nullable(
        z.string({ error: 'scheduled_at must be a string: an ISO 8601 time or, for example, "in 1 hour"' }),
      ),
    ),
  },
  bodyError,
);
export type CreateBroadcastInput = z.output<typeof createBroadcastSchema>;

/** `PATCH /v1/broadcasts/{id}` (a draft only): what is given changes, what is left out stays, null removes. */
export const updateBroadcastSchema = z.strictObject(content, bodyError);
export type UpdateBroadcastInput = z.output<typeof updateBroadcastSchema>;

/** `POST /v1/broadcasts/{id}/send`: at once, or at `scheduled_at` (SDK 6.38 sends `{}` for "now"). */
export const sendBroadcastSchema = z.strictObject(
  {
    scheduled_at: z.optional(
      z.nullable(
        z.string({ error: 'scheduled_at must be a string: an ISO 8601 time or, for example, "in 1 hour"' }),
      ),
    ),
  },
  bodyError,
);

/** `POST /v1/broadcasts/{id}/preview` (ours): a contact by id or address; none: a contact with no fields. */
export const previewBroadcastSchema = z.strictObject(
  {
    contact: z.optional(
      z.nullable(
        z
          .string({ error: 'contact must be a string: a contact id or an email address' })
          .check(z.refine((s) => s.trim().length > 0, 'contact must not be empty')),
      ),
    ),
  },
  bodyError,
);

/** The fan-out's progress as GET shows it (ours). */
export const progressOf = (broadcast: Broadcast) =>
  broadcast.fanout
    ? {
        created: broadcast.fanout.created,
        skipped: { ...broadcast.fanout.skipped },
        done: broadcast.fanout.done,
      }
    : null;

/** The field when it has a value; nothing when it is null (Resend's document types it a string, never null). */
const ifSet = <K extends string>(key: K, value: string | null) =>
  (value === null ? {} : { [key]: value }) as Partial<Record<K, string>>;

/**
 * How `GET /v1/broadcasts/{id}` shows a broadcast: Resend's GetBroadcastResponseSuccess (with
 * `audience_id` the segment's id, as Resend still answers it; `name`, `preview_text`,
 * `scheduled_at` and `sent_at` left out while they have none, as Resend's document types them
 * strings) and ours: `progress` (null before the fan-out begins), `waiting` (null when nothing
 * holds it) and `totals` (when a totals reader is wired).
 */
export const toBroadcastBody = (broadcast: Broadcast, totals?: BroadcastTotals) => ({
  object: 'broadcast' as const,
  id: broadcast.id,
  ...ifSet('name', broadcast.name),
  audience_id: broadcast.segment_id,
  segment_id: broadcast.segment_id,
  from: broadcast.from,
  subject: broadcast.subject,
  reply_to: broadcast.reply_to,
  ...ifSet('preview_text', broadcast.preview_text),
  status: broadcast.status,
  created_at: broadcast.created_at,
  ...ifSet('scheduled_at', broadcast.scheduled_at),
  ...ifSet('sent_at', broadcast.sent_at),
  topic_id: broadcast.topic_id,
  html: broadcast.html,
  text: broadcast.text,
  progress: progressOf(broadcast),
  waiting: broadcast.waiting ?? null,
  ...(totals ? { totals } : {}),
});

/** A broadcast as listed (Resend's ListBroadcastsResponseSuccess items: a field with no value left out). */
export const toBroadcastListed = (broadcast: Broadcast) => ({
  id: broadcast.id,
  ...ifSet('name', broadcast.name),
  ...ifSet('audience_id', broadcast.segment_id),
  ...ifSet('segment_id', broadcast.segment_id),
  status: broadcast.status,
  created_at: broadcast.created_at,
  ...ifSet('scheduled_at', broadcast.scheduled_at),
  ...ifSet('sent_at', broadcast.sent_at),
  ...ifSet('topic_id', broadcast.topic_id),
});
