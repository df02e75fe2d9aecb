import * as z from 'zod/mini';
import { named, timestamp } from '../shared/answers.js';
import { SUBSCRIPTIONS, VISIBILITIES } from './model.js';

/**
 * The topic routes' answers (shared/answers.ts says how answers are described). A topic without a
 * description has no `description` field: Resend's document types it a string, never null.
 */

const topicShape = {
  id: z.string(),
  name: z.string(),
  description: z.optional(z.string()),
  default_subscription: z.enum(SUBSCRIPTIONS),
  visibility: z.enum(VISIBILITIES),
  created_at: timestamp,
};

export const topicSchema = named(
  'Topic',
  z.object({ object: z.literal('topic'), ...topicShape }),
  'What a contact may opt in to or out of: its default for a contact who made no choice is fixed at creation.',
);

export const topicListItemSchema = named('TopicListItem', z.object(topicShape), 'A topic, as listed.');

export const contactTopicSchema = named(
  'ContactTopic',
  z.object({
    id: z.string(),
    name: z.string(),
    description: z.optional(z.string()),
    subscription: z.enum(SUBSCRIPTIONS).register(z.globalRegistry, {
      description: "The contact's choice for the topic, or the topic's default when it made none.",
    }),
  }),
  "A topic with one contact's subscription to it.",
);

/** `PATCH /v1/contacts/{id}/topics`: the contact (`id`, as SDK 6.38 reads it; `contact_id`, as Resend's document) and the choices made. */
export const contactTopicsUpdatedSchema = z.object({
  object: z.literal('contact_topics'),
  id: z.string(),
  contact_id: z.string(),
  topics: z.array(z.object({ id: z.string(), subscription: z.enum(SUBSCRIPTIONS) })),
});
