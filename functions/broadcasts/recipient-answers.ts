import * as z from 'zod/mini';
import { listOf, named } from '../shared/answers.js';
import { BOUNCE_TYPES } from './recipients.js';

/**
 * The answers of a broadcast's recipients and clicked links (shared/answers.ts says how answers are
 * described): Resend's fields, and ours beside them (`email_id`, `created_at`).
 */

const opaque = z.string().register(z.globalRegistry, {
  description: 'An opaque cursor for this row (`after`, `before`); it names no entity.',
});

export const broadcastRecipientSchema = named(
  'BroadcastRecipient',
  z.object({
    id: opaque,
    contact_id: z.nullable(z.string()),
    email: z.string(),
    count: z.optional(z.number().check(z.int())),
    bounce_type: z.optional(z.enum(BOUNCE_TYPES)),
    clicked_links: z.optional(z.array(z.object({ url: z.string(), clicks: z.number().check(z.int()) }))),
    email_id: z
      .string()
      .register(z.globalRegistry, { description: "Ours: the recipient's email (GET /v1/emails/{id})." }),
    created_at: z.string().register(z.globalRegistry, {
      format: 'date-time',
      description: 'Ours: when the recipient first had this outcome (its first open or click).',
    }),
  }),
  'A recipient of a broadcast with one outcome: `count` for opened and clicked, `bounce_type` for bounced, `clicked_links` for clicked.',
);

export const broadcastRecipientsSchema = listOf(broadcastRecipientSchema);

export const broadcastClickedLinkSchema = named(
  'BroadcastClickedLink',
  z.object({
    id: opaque,
    url: z.string(),
    clicks: z.number().check(z.int()),
    unique_clicks: z.number().check(z.int()),
  }),
  'A link of a broadcast: its clicks, and how many recipients clicked it.',
);

export const broadcastClickedLinksSchema = listOf(broadcastClickedLinkSchema);
