/**
 * Contacts, as Resend has them since SDK 6.x: global (one per address, compared case-insensitively),
 * with a name, a global `unsubscribed`, property values, and at creation the segments they join and
 * their topic choices. The requests' schemas and the answers' builders; where contacts are kept is
 * adapters/dynamodb/contact-writes.ts and contact-listing.ts.
 */
import * as z from 'zod/mini';
import { propertiesAnswer } from '../contact-properties/values.js';
import { isValidEmail } from '../shared/address.js';
import type { Contact, ContactProperty, Subscription } from './contact.js';

/**
 * A create is one TransactWriteItems of at most 100 items: the contact's, its id item, and one per
 * segment and topic. So at most 49 of each (Resend's document gives no limit).
 */
export const MAX_CREATE_SEGMENTS = 49;
export const MAX_CREATE_TOPICS = 49;
export const MAX_NAME_CHARS = 256;

/** A contact's address: a bare address (no display name), as given (its case kept), trimmed. */
export const contactAddress = z.pipe(
  z.string({ error: 'must be a string with an email address' }),
  z.transform((value: string, ctx) => {
    const email = value.trim();
    if (!isValidEmail(email)) {
      ctx.issues.push({ code: 'custom', message: `"${email}" is not a valid email address`, input: value });
      return z.NEVER;
    }
    return email;
  }),
);

export const name = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .check(z.maxLength(MAX_NAME_CHARS, `${field} must be at most ${MAX_NAME_CHARS} characters`));

export const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

/** Values by property key: a string or a number as the property's type says (checked against it), or null to clear one. */
export const properties = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.null()], { error: 'must be a string, a number or null' }),
  { error: 'properties must be an object of property keys and values' },
);

/** A segment as given: its id (Resend's document), or `{id}` (what SDK 6.38 sends). */
const segmentRef = z.union([z.string(), z.object({ id: z.string() })], {
  error: 'each segment must be a segment id or {"id": …}',
});

export const SUBSCRIPTIONS = ['opt_in', 'opt_out'] as const;

const topicChoice = z.object({
  id: z.string({ error: 'each topic needs its id' }),
  subscription: z.enum(SUBSCRIPTIONS, { error: 'subscription must be opt_in or opt_out' }),
});

export const createContactSchema = z.strictObject(
  {
    email: contactAddress,
    first_name: z.optional(z.nullable(name('first_name'))),
    last_name: z.optional(z.nullable(name('last_name'))),
    unsubscribed: z.optional(z.boolean({ error: 'unsubscribed must be true or false' })),
    properties: z.optional(properties),
    segments: z.optional(
      z
        .array(segmentRef, { error: 'segments must be a list' })
        .check(z.maxLength(MAX_CREATE_SEGMENTS, `at most ${MAX_CREATE_SEGMENTS} segments`)),
    ),
    topics: z.optional(
      z
        .array(topicChoice, { error: 'topics must be a list of {id, subscription}' })
        .check(z.maxLength(MAX_CREATE_TOPICS, `at most ${MAX_CREATE_TOPICS} topics`)),
    ),
    /** Resend's deprecated field: the audience (a segment here) the contact joins. */
    audience_id: z.optional(z.string({ error: 'audience_id must be a segment id' })),
  },
  bodyError,
);

export type CreateContactInput = z.output<typeof createContactSchema>;

/** The segment ids of a create, from either shape, without repeats. */
export const segmentIdsOf = (input: Pick<CreateContactInput, 'segments' | 'audience_id'>): string[] => [
  ...new Set([
    ...(input.segments ?? []).map((s) => (typeof s === 'string' ? s : s.id)),
    ...(input.audience_id ? [input.audience_id] : []),
  ]),
];

/** The topic choices of a create; the last given for a topic counts. */
export const topicChoicesOf = (
  input: Pick<CreateContactInput, 'topics'>,
): { id: string; subscription: Subscription }[] => [
  ...new Map((input.topics ?? []).map((t) => [t.id, { id: t.id, subscription: t.subscription }])).values(),
];

/**
 * A contact as the list shows it (Resend's ListContactsResponseSuccess items). A name it has not
 * is left out, not null: Resend's document types both as strings.
 */
export const toContactListItem = (contact: Contact) => ({
  id: contact.id,
  email: contact.email,
  ...(contact.first_name !== null ? { first_name: contact.first_name } : {}),
  ...(contact.last_name !== null ? { last_name: contact.last_name } : {}),
  created_at: contact.created_at,
  unsubscribed: contact.unsubscribed,
});

/** A contact as GET answers it: with its properties' values by key (Resend's GetContactResponseSuccess). */
export const toContactBody = (contact: Contact, defined: readonly ContactProperty[]) => ({
  object: 'contact' as const,
  ...toContactListItem(contact),
  properties: propertiesAnswer(contact.props, defined),
});

/**
 * What a path's `{id}` names: an address when it holds an `@`. API Gateway gives a path parameter
 * percent-decoded and keeps `+` (only a query string's `+` is a space), as does the local gateway;
 * a space in an address is no address, so one there is taken for a `+` a client turned into one.
 */
export const pathContact = (param: string): string =>
  param.includes('@') ? param.replaceAll(' ', '+') : param;
