import { PUBLISHES } from '../shared/function-spec.js';
import type { RouteDeclaration } from '../shared/route.js';

/**
 * The topics' routes, and a contact's topics (shared/route.ts says what a declaration holds;
 * docs.ts has their words). Topics are one partition (Query lists it, GetItem reads one); a
 * change raises its webhook event (the endpoints' Query, the delivery queue, PutItem to keep an
 * event that could not be published). A contact's choices are items of their own, written with
 * BatchWriteItem; a deleted topic's choices are handed to the audience clean-up queue.
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const shared = () => import('../shared/answers.js');

/** What raising a webhook event takes (webhooks/publish.ts; the unpublished store keeps by PutItem). */
const RAISES = { ...PUBLISHES, env: ['WEBHOOK_QUEUE_URL'] } as const;

export const createTopicRoute = {
  handler: 'create-topic',
  method: 'POST',
  path: '/v1/topics',
  permission: 'full_access',
  summary: 'Create a topic',
  body: { type: 'json' },
  ok: [201],
  schemas: async () => ({
    body: (await model()).createTopicSchema,
    answer: (await shared()).reference('topic'),
  }),
  access: { ...RAISES, actions: ['PutItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const listTopicsRoute = {
  handler: 'list-topics',
  method: 'GET',
  path: '/v1/topics',
  permission: 'full_access',
  summary: 'List topics, newest first',
  schemas: async () => ({
    query: (await import('../shared/uuid-pages.js')).uuidPageQuerySchema,
    answer: (await shared()).listOf((await answers()).topicListItemSchema),
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getTopicRoute = {
  handler: 'get-topic',
  method: 'GET',
  path: '/v1/topics/{id}',
  permission: 'full_access',
  summary: 'Retrieve one topic',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).topicSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const updateTopicRoute = {
  handler: 'update-topic',
  method: 'PATCH',
  path: '/v1/topics/{id}',
  permission: 'full_access',
  summary: "Change a topic's name, description or visibility",
  body: { type: 'json' },
  errors: [404, 409],
  schemas: async () => ({
    body: (await model()).updateTopicSchema,
    answer: (await shared()).reference('topic'),
  }),
  access: { ...RAISES, actions: ['GetItem', 'PutItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const deleteTopicRoute = {
  handler: 'delete-topic',
  method: 'DELETE',
  path: '/v1/topics/{id}',
  permission: 'full_access',
  summary: "Delete a topic (its contacts' choices are removed off the request path)",
  errors: [404],
  schemas: async () => ({ answer: (await shared()).deletion('topic') }),
  access: {
    ...RAISES,
    env: [...RAISES.env, 'AUDIENCE_CLEANUP_QUEUE_URL'],
    audienceCleanupQueue: ['SendMessage'],
    actions: ['DeleteItem', 'Query'],
  },
} as const satisfies RouteDeclaration;

export const listContactTopicsRoute = {
  handler: 'list-contact-topics',
  method: 'GET',
  path: '/v1/contacts/{id}/topics',
  permission: 'full_access',
  summary: "List topics with a contact's subscription to each (the contact by id or address)",
  errors: [404],
  schemas: async () => ({
    query: (await import('../shared/uuid-pages.js')).uuidPageQuerySchema,
    answer: (await shared()).listOf((await answers()).contactTopicSchema),
  }),
  access: { actions: ['GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const updateContactTopicsRoute = {
  handler: 'update-contact-topics',
  method: 'PATCH',
  path: '/v1/contacts/{id}/topics',
  permission: 'full_access',
  summary: "Record a contact's choices for some topics (the contact by id or address)",
  body: { type: 'json' },
  errors: [404],
  schemas: async () => ({
    body: (await model()).updateContactTopicsSchema,
    answer: (await answers()).contactTopicsUpdatedSchema,
  }),
  access: { ...RAISES, actions: ['GetItem', 'Query', 'BatchWriteItem'] },
} as const satisfies RouteDeclaration;

/** The topics routes (issue 40; shared/route.ts says what a declaration holds). */
export const TOPIC_ROUTES = [
  createTopicRoute,
  listTopicsRoute,
  getTopicRoute,
  updateTopicRoute,
  deleteTopicRoute,
  listContactTopicsRoute,
  updateContactTopicsRoute,
] as const;
