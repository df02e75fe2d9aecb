import * as z from 'zod/mini';
import type { Subscription, Topic, TopicChoice } from '../contacts/contact.js';
import { isUuid } from '../shared/ids.js';

/**
 * Topics (Resend's): what a contact may opt in to or out of. A topic's `default_subscription` says
 * what a contact who made no choice gets, and is fixed at creation; `visibility` says whether the
 * preference page shows it to every contact (`public`) or only to those opted in (`private`).
 */
export const SUBSCRIPTIONS = ['opt_in', 'opt_out'] as const satisfies readonly Subscription[];
export const VISIBILITIES = ['public', 'private'] as const satisfies readonly Topic['visibility'][];

/** Resend's limits (its CreateTopicOptions). */
export const MAX_TOPIC_NAME = 50;
export const MAX_TOPIC_DESCRIPTION = 200;
/** The topics one PATCH of a contact's topics may name (4 BatchWriteItem calls of 25). */
export const MAX_CHOICES_PER_UPDATE = 100;

const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

const name = z.string({ error: 'name must be a string' }).check(
  z.refine((s) => s.trim().length > 0, 'name must not be empty'),
  z.maxLength(MAX_TOPIC_NAME, `name must be at most ${MAX_TOPIC_NAME} characters`),
);
const description = z.nullable(
  z
    .string({ error: 'description must be a string' })
    .check(
      z.maxLength(MAX_TOPIC_DESCRIPTION, `description must be at most ${MAX_TOPIC_DESCRIPTION} characters`),
    ),
);
const subscription = (field: string) =>
  z.enum(SUBSCRIPTIONS, { error: `${field} must be opt_in or opt_out` });
const visibility = z.enum(VISIBILITIES, { error: 'visibility must be public or private' });

export const createTopicSchema = z.strictObject(
  {
    name,
    default_subscription: subscription('default_subscription'),
    description: z.optional(description),
    visibility: z.optional(visibility),
  },
  bodyError,
);
export type CreateTopicInput = z.output<typeof createTopicSchema>;

/**
 * Resend's update: `name`, `description`, `visibility`. SDK 6.38 sends its whole options object,
 * `id` included: accepted when it is the path's. `default_subscription` cannot change (topics.ts
 * refuses one that differs; the same value is accepted, so a client may send a topic back whole).
 */
export const updateTopicSchema = z.strictObject(
  {
    id: z.optional(z.string({ error: 'id must be a string' })),
    name: z.optional(name),
    description: z.optional(description),
    visibility: z.optional(visibility),
    default_subscription: z.optional(subscription('default_subscription')),
  },
  bodyError,
);
export type UpdateTopicInput = z.output<typeof updateTopicSchema>;

const choice = z.strictObject({
  id: z.string({ error: 'id must be a topic id' }).check(z.refine(isUuid, 'id must be a topic id (a UUID)')),
  subscription: subscription('subscription'),
});
const choices = z
  .array(choice, { error: 'topics must be a list' })
  .check(
    z.refine(
      (list) => list.length >= 1 && list.length <= MAX_CHOICES_PER_UPDATE,
      `topics must list 1 to ${MAX_CHOICES_PER_UPDATE} topics`,
    ),
  )
  .register(z.globalRegistry, { minItems: 1, maxItems: MAX_CHOICES_PER_UPDATE });

/**
 * `PATCH /v1/contacts/{id}/topics`: Resend's `{topics: […]}`, or the bare array SDK 6.38 sends
 * (`resend.contacts.topics.update` puts `payload.topics` itself in the body).
 */
export const updateContactTopicsSchema = z.pipe(
  z.union([z.strictObject({ topics: choices }, bodyError), choices], {
    error: 'the body must be {"topics": [{"id", "subscription"}]} or that list itself',
  }),
  z.transform((body) => (Array.isArray(body) ? body : body.topics)),
);
export type ChoiceInput = { id: string; subscription: Subscription };

/** How the API shows a topic (Resend's GetTopicResponseSuccess); no `description` when it has none. */
export const toTopicBody = (topic: Topic) => ({
  object: 'topic' as const,
  ...toTopicListed(topic),
});

/** A topic as listed (Resend's ListTopicsResponseSuccess items). */
export const toTopicListed = (topic: Topic) => ({
  id: topic.id,
  name: topic.name,
  ...(topic.description === null ? {} : { description: topic.description }),
  default_subscription: topic.default_subscription,
  visibility: topic.visibility,
  created_at: topic.created_at,
});

/** A contact's subscription to one topic: its choice, else the topic's default. */
export const subscriptionOf = (topic: Topic, choice: TopicChoice | undefined): Subscription =>
  choice?.subscription ?? topic.default_subscription;

/** One topic in `GET /v1/contacts/{id}/topics` (Resend's GetContactTopicsResponseSuccess items). */
export const toContactTopic = (topic: Topic, choice: TopicChoice | undefined) => ({
  id: topic.id,
  name: topic.name,
  ...(topic.description === null ? {} : { description: topic.description }),
  subscription: subscriptionOf(topic, choice),
});
