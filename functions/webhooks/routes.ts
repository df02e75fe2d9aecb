import { PUBLISHES } from '../shared/function-spec.js';
import type { RouteDeclaration } from '../shared/route.js';

/**
 * The webhooks' routes (shared/route.ts says what a declaration holds; docs.ts has their words).
 * Their access: endpoints in one partition (PutItem, GetItem, Query; UpdateItem of its own fields
 * when changed, beside what delivery writes; DeleteItem), their messages
 * and attempts under the endpoint's partition (GetItem, Query); a replay marks its message
 * (PutItem) and queues it (SendMessage). Creating and changing an endpoint resolves its name (no
 * AWS call).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const shapes = () => import('../shared/answers.js');

export const createWebhookRoute = {
  handler: 'create-webhook',
  method: 'POST',
  path: '/v1/webhooks',
  permission: 'full_access',
  summary: 'Add a webhook endpoint (its signing secret is in the answer)',
  body: { type: 'json' },
  ok: [201],
  schemas: async () => ({
    body: (await model()).createWebhookSchema,
    answer: (await answers()).webhookSecretSchema,
  }),
  access: { optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'], actions: ['PutItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const listWebhooksRoute = {
  handler: 'list-webhooks',
  method: 'GET',
  path: '/v1/webhooks',
  permission: 'full_access',
  summary: 'List webhook endpoints, newest first',
  schemas: async () => ({
    query: (await model()).listWebhooksQuerySchema,
    answer: (await shapes()).listOf((await answers()).webhookListItemSchema),
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getWebhookRoute = {
  handler: 'get-webhook',
  method: 'GET',
  path: '/v1/webhooks/{id}',
  permission: 'full_access',
  summary: 'Retrieve one webhook endpoint, with its signing secret',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).webhookSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const updateWebhookRoute = {
  handler: 'update-webhook',
  method: 'PATCH',
  path: '/v1/webhooks/{id}',
  permission: 'full_access',
  summary: "Change an endpoint's URL, events or status",
  body: { type: 'json' },
  errors: [404],
  schemas: async () => ({
    body: (await model()).updateWebhookSchema,
    answer: (await answers()).webhookReferenceSchema,
  }),
  access: { optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'], actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

export const deleteWebhookRoute = {
  handler: 'delete-webhook',
  method: 'DELETE',
  path: '/v1/webhooks/{id}',
  permission: 'full_access',
  summary: 'Remove a webhook endpoint',
  errors: [404],
  schemas: async () => ({ answer: (await shapes()).deletion('webhook') }),
  access: { actions: ['GetItem', 'DeleteItem'] },
} as const satisfies RouteDeclaration;

export const rotateWebhookSecretRoute = {
  handler: 'rotate-webhook-secret',
  method: 'POST',
  path: '/v1/webhooks/{id}/signing-secret/rotate',
  permission: 'full_access',
  summary: 'New signing secret (the old one signs beside it for 24 hours)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).webhookSecretSchema }),
  access: { actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

export const listWebhookEventsRoute = {
  handler: 'list-webhook-events',
  method: 'GET',
  path: '/v1/webhooks/{id}/events',
  permission: 'full_access',
  summary: "List an endpoint's messages, newest first",
  errors: [404],
  schemas: async () => ({
    query: (await import('./list-messages-query.js')).listMessagesQuerySchema,
    answer: (await shapes()).listOf((await answers()).webhookMessageListItemSchema),
  }),
  access: { actions: ['GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const getWebhookEventRoute = {
  handler: 'get-webhook-event',
  method: 'GET',
  path: '/v1/webhooks/{id}/events/{event_id}',
  permission: 'full_access',
  summary: 'Retrieve one message, with its payload',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).webhookMessageSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const listWebhookAttemptsRoute = {
  handler: 'list-webhook-attempts',
  method: 'GET',
  path: '/v1/webhooks/{id}/events/{event_id}/attempts',
  permission: 'full_access',
  summary: "List a message's delivery attempts",
  errors: [404],
  schemas: async () => ({
    query: (await model()).listAttemptsQuerySchema,
    answer: (await shapes()).listOf((await answers()).webhookAttemptSchema),
  }),
  access: { actions: ['GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const replayWebhookEventRoute = {
  handler: 'replay-webhook-event',
  method: 'POST',
  path: '/v1/webhooks/{id}/events/{event_id}/replay',
  permission: 'full_access',
  summary: 'Send a message again (same id)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).webhookEventReferenceSchema }),
  access: { env: ['WEBHOOK_QUEUE_URL'], ...PUBLISHES, actions: ['GetItem', 'PutItem'] },
} as const satisfies RouteDeclaration;

export const WEBHOOK_ROUTES = [
  createWebhookRoute,
  listWebhooksRoute,
  getWebhookRoute,
  updateWebhookRoute,
  deleteWebhookRoute,
  rotateWebhookSecretRoute,
  listWebhookEventsRoute,
  getWebhookEventRoute,
  listWebhookAttemptsRoute,
  replayWebhookEventRoute,
] as const;
