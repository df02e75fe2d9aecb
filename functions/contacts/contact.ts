/**
 * The audience concepts' stored shapes (issue 40): a contact, its segment memberships and topic
 * choices, segments, topics and contact properties, as every concept reads them
 * (adapters/dynamodb/audience-items.ts writes and reads their items). No imports: the console and
 * every function may name them without loading code.
 */

/** A value of a contact property: a string or a number, as the property's type says. */
export type PropertyValue = string | number;

export interface Contact {
  /** A UUIDv7. */
  readonly id: string;
  /** The address as first given (its case kept); contacts are looked up by it lower-cased. */
  readonly email: string;
  readonly first_name: string | null;
  readonly last_name: string | null;
  /** Global: no email with a topic, and no broadcast, reaches it. */
  readonly unsubscribed: boolean;
  /** Its properties' values, by the property's id (contact-properties): a deleted property's are never shown. */
  readonly props: Readonly<Record<string, PropertyValue>>;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A contact's choice for a topic, and a topic's default: the values, for the console's choices. */
export const SUBSCRIPTIONS = ['opt_in', 'opt_out'] as const;
export type Subscription = (typeof SUBSCRIPTIONS)[number];

/** Who sees a topic on the preference page: everyone (`public`), or only contacts opted in (`private`). */
export const TOPIC_VISIBILITIES = ['public', 'private'] as const;

/** A contact's choice for one topic: an item of its own. */
export interface TopicChoice {
  readonly contact_id: string;
  readonly topic_id: string;
  readonly subscription: Subscription;
  readonly updated_at: string;
}

/** A contact's membership of one segment: an item of its own. */
export interface Membership {
  readonly contact_id: string;
  readonly segment_id: string;
  /** When the contact was added to the segment (Resend's `created_at` in a contact's segments). */
  readonly created_at: string;
}

export interface Segment {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
}

export interface Topic {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  /** Fixed at creation. */
  readonly default_subscription: Subscription;
  readonly visibility: (typeof TOPIC_VISIBILITIES)[number];
  readonly created_at: string;
  readonly updated_at: string;
}

export interface ContactProperty {
  readonly id: string;
  /** Letters, digits and underscores, at most 50. Unique. */
  readonly key: string;
  readonly type: 'string' | 'number';
  readonly fallback_value: PropertyValue | null;
  readonly created_at: string;
}

/** Whether a string in a path is an address (`…@…`) rather than an id. */
export const isAddress = (idOrEmail: string): boolean => idOrEmail.includes('@');

/** How addresses are compared: case-insensitively. */
export const addressKey = (email: string): string => email.trim().toLowerCase();
