import * as z from 'zod/mini';
import { addressArray, listOf, named, timestamp } from '../shared/answers.js';
import { BROADCAST_STATUSES } from './broadcast.js';

/**
 * The broadcast routes' answers (shared/answers.ts says how answers are described), in Resend's
 * shapes (CreateBroadcastResponseSuccess, GetBroadcastResponseSuccess, ListBroadcastsResponseSuccess,
 * Update/Remove/Send/CancelBroadcastResponseSuccess) with ours beside them. A field Resend's
 * document types a string, never null (`name`, `preview_text`, `scheduled_at`, `sent_at`; in a
 * list every one) is left out while it has no value.
 */

const status = z.enum(BROADCAST_STATUSES).register(z.globalRegistry, {
  description:
    "`draft`, `scheduled`, `queued`, `sending`, `sent`, `canceled`. SDK 6.38's type knows `draft`, `queued` and `sent`: `scheduled`, `sending` and `canceled` are ours (Resend's dashboard shows them).",
});

const nullableId = z.nullable(z.string());

export const broadcastProgressSchema = named(
  'BroadcastProgress',
  z.object({
    created: z.number().check(z.int()),
    skipped: z.object({
      unsubscribed: z.number().check(z.int()),
      opted_out: z.number().check(z.int()),
    }),
    done: z.boolean(),
  }),
  "How far the fan-out has come (ours): emails made (one per contact sent to), contacts skipped (globally unsubscribed; opted out of the broadcast's topic), and whether every page of the segment is done.",
);

export const broadcastWaitingSchema = named(
  'BroadcastWaiting',
  z.object({
    reason: z.enum(['quota', 'paused']),
    detail: z.string(),
    since: timestamp,
  }),
  "Why a queued or sending broadcast does not go on now (ours): SES's 24-hour quota is used up (`quota`), or sending is paused (`paused`).",
);

const count = z.number().check(z.int());
export const broadcastTotalsSchema = named(
  'BroadcastTotals',
  z.object({
    sent: count,
    delivered: count,
    opened: count,
    unique_opened: count,
    clicked: count,
    unique_clicked: count,
    bounced: count,
    complained: count,
    unsubscribed: count,
    suppressed: count,
    ended: count,
  }),
  "A broadcast's totals (ours), from counters: handed to SES, delivered, opens and clicks (and the recipients who opened or clicked at least once), bounced, complained, unsubscribed through it, left out as suppressed, and ended without reaching SES (withheld, failed, canceled).",
);

export const broadcastSchema = named(
  'Broadcast',
  z.object({
    object: z.literal('broadcast'),
    id: z.string(),
    name: z.optional(z.string()),
    audience_id: nullableId.register(z.globalRegistry, {
      deprecated: true,
      description: "The segment's id, under Resend's older name.",
    }),
    segment_id: nullableId,
    from: z.string(),
    subject: z.string(),
    reply_to: addressArray,
    preview_text: z.optional(z.string()),
    status,
    created_at: timestamp,
    scheduled_at: z.optional(timestamp),
    sent_at: z.optional(timestamp),
    topic_id: nullableId,
    html: z.nullable(z.string()),
    text: z.nullable(z.string()),
    progress: z.nullable(broadcastProgressSchema),
    waiting: z.nullable(broadcastWaitingSchema),
    totals: z.optional(broadcastTotalsSchema),
  }),
  "A broadcast (Resend's object): one message to a segment, each contact getting its own email. Ours beside Resend's fields: `progress`, `waiting` and `totals`.",
);

export const broadcastListItemSchema = z.object({
  id: z.string(),
  name: z.optional(z.string()),
  audience_id: z.optional(z.string()),
  segment_id: z.optional(z.string()),
  status,
  created_at: timestamp,
  scheduled_at: z.optional(timestamp),
  sent_at: z.optional(timestamp),
  topic_id: z.optional(z.string()),
});

export const broadcastListSchema = listOf(broadcastListItemSchema);

/** What create, update, cancel and duplicate answer: `{object: "broadcast", id}`. */
export const broadcastReferenceSchema = z.object({ object: z.literal('broadcast'), id: z.string() });

/** What a send answers: Resend's `{id}` (with `object`, as its other answers). */
export const broadcastSentSchema = z.object({ object: z.literal('broadcast'), id: z.string() });

export const broadcastDeletedSchema = z.object({
  object: z.literal('broadcast'),
  id: z.string(),
  deleted: z.literal(true),
});

export const broadcastPreviewSchema = named(
  'BroadcastPreview',
  z.object({
    object: z.literal('broadcast_preview'),
    contact_id: z.nullable(z.string()),
    email: z.nullable(z.string()),
    subject: z.string(),
    html: z.nullable(z.string()),
    text: z.nullable(z.string()),
  }),
  "A broadcast rendered for one contact (ours): its merge tags filled with the contact's fields and properties (or their fallbacks), and an unsubscribe link that only shows where the real one goes.",
);
