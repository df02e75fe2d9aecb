import * as z from 'zod/mini';
import { named, timestamp } from '../shared/answers.js';

/**
 * The contact routes' answers (shared/answers.ts says how answers are described): Resend's
 * contact object and its list item. A name the contact has not is left out: Resend's document
 * types names as strings (SDK 6.38 says `string | null`; a missing field reads as neither there).
 */

const contactShape = {
  id: z.string().register(z.globalRegistry, { format: 'uuid' }),
  email: z.string(),
  first_name: z.optional(z.string()),
  last_name: z.optional(z.string()),
  created_at: timestamp,
  unsubscribed: z.boolean().register(z.globalRegistry, {
    description: 'Global: no email with a topic (and no broadcast) reaches the contact.',
  }),
};

export const contactListItemSchema = named(
  'ContactListItem',
  z.object(contactShape),
  'A contact, as listed.',
);

export const contactSchema = named(
  'Contact',
  z.object({
    object: z.literal('contact'),
    ...contactShape,
    properties: z.record(z.string(), z.union([z.string(), z.number()])).register(z.globalRegistry, {
      description: "The contact's values of the contact properties, by key (those it has a value of).",
    }),
  }),
  'A contact: one per address, compared case-insensitively.',
);

/** What a create or a change answers: `{object: "contact", id}`. */
export const contactReferenceSchema = z.object({
  object: z.literal('contact'),
  id: z.string().register(z.globalRegistry, { format: 'uuid' }),
});

/** What a removal answers: Resend's document's `id` and SDK 6.38's `contact`, both the contact's id. */
export const contactRemovedSchema = z.object({
  object: z.literal('contact'),
  id: z.string(),
  contact: z.string(),
  deleted: z.literal(true),
});
