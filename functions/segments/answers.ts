import * as z from 'zod/mini';
import type { Contact, Membership, Segment } from '../contacts/contact.js';
import { deletion, listOf, named, timestamp } from '../shared/answers.js';

/**
 * The segment routes' answers (shared/answers.ts says how answers are described), in Resend's
 * shapes: segments, the older audiences (segments under another name), a contact's segments and a
 * segment's contacts.
 */

export const segmentSchema = named(
  'Segment',
  z.object({ object: z.literal('segment'), id: z.string(), name: z.string(), created_at: timestamp }),
  "A segment (Resend's object): a named group of contacts.",
);

export const segmentCreatedSchema = z.object({
  object: z.literal('segment'),
  id: z.string(),
  name: z.string(),
});

export const segmentListItemSchema = z.object({ id: z.string(), name: z.string(), created_at: timestamp });

export const segmentDeletedSchema = deletion('segment');

export const audienceSchema = named(
  'Audience',
  z.object({ object: z.literal('audience'), id: z.string(), name: z.string(), created_at: timestamp }),
  "An audience (Resend's deprecated object): a segment under its older name, the same id.",
);

export const audienceCreatedSchema = z.object({
  object: z.literal('audience'),
  id: z.string(),
  name: z.string(),
});

export const audienceDeletedSchema = deletion('audience');

/** A segment of a contact: its `created_at` is when the contact was added to it. */
export const contactSegmentListItemSchema = z.object({
  id: z.string(),
  name: z.string(),
  created_at: timestamp,
});

export const contactSegmentSchema = z.object({
  object: z.literal('contact_segment'),
  contact_id: z.string(),
  segment_id: z.string(),
});

export const contactSegmentRemovedSchema = z.object({
  object: z.literal('contact_segment'),
  contact_id: z.string(),
  segment_id: z.string(),
  deleted: z.literal(true),
});

/** A contact in a list (Resend's ListContactsResponseSuccess item); a name not given is left out. */
export const segmentContactSchema = z.object({
  id: z.string(),
  email: z.string(),
  first_name: z.optional(z.string()),
  last_name: z.optional(z.string()),
  created_at: timestamp,
  unsubscribed: z.boolean(),
});

export const segmentListSchema = listOf(segmentListItemSchema);
export const audienceListSchema = listOf(segmentListItemSchema);
export const contactSegmentListSchema = listOf(contactSegmentListItemSchema);
export const segmentContactListSchema = listOf(segmentContactSchema);

export const toSegmentBody = (segment: Segment) => ({ object: 'segment' as const, ...segment });
export const toAudienceBody = (segment: Segment) => ({ object: 'audience' as const, ...segment });
export const toSegmentListItem = ({ id, name, created_at }: Segment) => ({ id, name, created_at });

export const toContactSegmentItem = (segment: Segment, membership: Membership) => ({
  id: segment.id,
  name: segment.name,
  created_at: membership.created_at,
});

export const toSegmentContact = (contact: Contact) => ({
  id: contact.id,
  email: contact.email,
  ...(contact.first_name === null ? {} : { first_name: contact.first_name }),
  ...(contact.last_name === null ? {} : { last_name: contact.last_name }),
  created_at: contact.created_at,
  unsubscribed: contact.unsubscribed,
});
