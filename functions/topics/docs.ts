import { LIST, page, ref, removed, T0 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_CHOICES_PER_UPDATE } from './model.js';
import type { TOPIC_ROUTES } from './routes.js';

/** The topics' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const TOPIC_ID = '019ac4d2-5b7e-7c1a-9f3d-2e8b6a4c0d11';
const OTHER_TOPIC_ID = '019ac4d1-0e2f-7a93-8b5c-7d1e3f9a2b40';
const CONTACT_ID = '019ac4c8-3a6d-7e20-b4f1-9c8d2e5a7b63';

const topicListed = {
  id: TOPIC_ID,
  name: 'Product news',
  description: 'What we ship, once a month.',
  default_subscription: 'opt_in',
  visibility: 'public',
  created_at: T0,
};

const BY_ID_OR_ADDRESS =
  'The contact by its id or its address (compared case-insensitively; a `+` in it is kept, as the SDK puts it in the path unencoded).';

export const TOPIC_DOCS: DocsOf<typeof TOPIC_ROUTES> = {
  'create-topic': {
    ok: 'Created.',
    example: ref('topic', TOPIC_ID),
    requestExample: {
      name: 'Product news',
      description: 'What we ship, once a month.',
      default_subscription: 'opt_in',
      visibility: 'public',
    },
    description:
      "`default_subscription` is what a contact who made no choice gets (`opt_in`: it receives the topic's emails; `opt_out`: it does not), fixed once created. `visibility` (default `private`): a public topic is listed on every contact's preference page, a private one only to the contacts opted in to it. Raises `topic.created`.",
  },
  'list-topics': {
    ok: 'A page of topics.',
    example: page([topicListed]),
    description: `${LIST} Cursors are topic ids.`,
  },
  'get-topic': {
    ok: 'The topic.',
    example: { object: 'topic', ...topicListed },
    description: 'A topic without a description has no `description` field.',
  },
  'update-topic': {
    ok: 'Updated.',
    example: ref('topic', TOPIC_ID),
    requestExample: { name: 'Product news', visibility: 'private' },
    description:
      "`name`, `description` (`null` removes it) and `visibility`; what is left out stays. `default_subscription` cannot change: a different one is a 400 (the same one is accepted). An `id` in the body (SDK 6.38 sends it) must be the path's. Raises `topic.updated`.",
  },
  'delete-topic': {
    ok: 'Deleted.',
    example: removed('topic', TOPIC_ID),
    description:
      "The topic goes at once; its contacts' choices are removed off the request path (the audience clean-up), so a topic chosen by a million contacts deletes as fast as any. Raises `topic.deleted`.",
  },
  'list-contact-topics': {
    ok: "A page of topics with the contact's subscription to each.",
    example: page([
      {
        id: TOPIC_ID,
        name: 'Product news',
        description: 'What we ship, once a month.',
        subscription: 'opt_out',
      },
      { id: OTHER_TOPIC_ID, name: 'Events', subscription: 'opt_in' },
    ]),
    description: `${BY_ID_OR_ADDRESS} Every topic (public and private), newest first, with the contact's choice, or the topic's \`default_subscription\` when it made none. ${LIST}`,
  },
  'update-contact-topics': {
    ok: 'The choices are recorded.',
    example: {
      object: 'contact_topics',
      id: CONTACT_ID,
      contact_id: CONTACT_ID,
      topics: [{ id: TOPIC_ID, subscription: 'opt_out' }],
    },
    requestExample: { topics: [{ id: TOPIC_ID, subscription: 'opt_out' }] },
    description: `${BY_ID_OR_ADDRESS} The body is \`{"topics": [{"id", "subscription"}]}\` or that list alone (SDK 6.38 sends the list), 1 to ${MAX_CHOICES_PER_UPDATE} topics, each existing and named once (400 naming the first that is not). The topics not named keep their choice. Answers the contact's id as \`id\` (SDK 6.38) and \`contact_id\` (Resend's document). Raises \`contact.topics.updated\` with the choices made.`,
  },
};
