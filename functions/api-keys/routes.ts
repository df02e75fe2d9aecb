import type { RouteDeclaration } from '../shared/route.js';

/** The API keys' routes (shared/route.ts says what a declaration holds; docs.ts has their words). */

const answers = () => import('./answers.js');
const requests = () => import('./requests.js');
const shapes = () => import('../shared/answers.js');

export const createApiKeyRoute = {
  handler: 'create-api-key',
  method: 'POST',
  path: '/v1/api-keys',
  permission: 'full_access',
  summary: 'Create an API key (its token is shown once)',
  body: { type: 'json' },
  ok: [201],
  schemas: async () => ({
    body: (await requests()).createApiKeySchema,
    answer: (await answers()).createdApiKeySchema,
  }),
  access: { actions: ['PutItem'] },
} as const satisfies RouteDeclaration;

export const listApiKeysRoute = {
  handler: 'list-api-keys',
  method: 'GET',
  path: '/v1/api-keys',
  permission: 'full_access',
  summary: 'List API keys (never their tokens)',
  schemas: async () => ({
    query: (await requests()).listApiKeysQuerySchema,
    answer: (await shapes()).listOf((await answers()).apiKeySchema),
  }),
  access: { actions: ['Query', 'BatchGetItem'] },
} as const satisfies RouteDeclaration;

export const updateApiKeyRoute = {
  handler: 'update-api-key',
  method: 'PATCH',
  path: '/v1/api-keys/{id}',
  permission: 'full_access',
  summary: 'Rename an API key',
  body: { type: 'json' },
  errors: [404],
  schemas: async () => ({
    body: (await requests()).updateApiKeySchema,
    answer: (await answers()).apiKeyReferenceSchema,
  }),
  access: { actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

// The key by id (GetItem), its lookup item deleted (returning the rate shards it names, each
// overwritten with a tombstone: PutItem), then its listing item.
export const deleteApiKeyRoute = {
  handler: 'delete-api-key',
  method: 'DELETE',
  path: '/v1/api-keys/{id}',
  permission: 'full_access',
  summary: 'Revoke an API key',
  errors: [404],
  schemas: async () => ({ answer: (await shapes()).deletion('api_key') }),
  access: { actions: ['GetItem', 'DeleteItem', 'PutItem'] },
} as const satisfies RouteDeclaration;

export const API_KEY_ROUTES = [
  createApiKeyRoute,
  listApiKeysRoute,
  updateApiKeyRoute,
  deleteApiKeyRoute,
] as const;
