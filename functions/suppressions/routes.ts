import type { RouteDeclaration } from '../shared/route.js';

/**
 * The suppression list's routes (shared/route.ts says what a declaration holds; docs.ts has their
 * words). Their access: an item per address (PutItem, conditional; GetItem for the one that
 * stands), listed through both listing indexes (Query, then BatchGetItem); by id through the first
 * (Query).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');

export const addSuppressionRoute = {
  handler: 'add-suppression',
  method: 'POST',
  path: '/v1/suppressions',
  permission: 'full_access',
  summary: 'Put an address on the suppression list',
  body: { type: 'json' },
  ok: [201, 200],
  schemas: async () => ({
    body: (await model()).addSuppressionSchema,
    answer: (await answers()).suppressionSchema,
  }),
  access: { actions: ['PutItem', 'GetItem'] },
} as const satisfies RouteDeclaration;

export const listSuppressionsRoute = {
  handler: 'list-suppressions',
  method: 'GET',
  path: '/v1/suppressions',
  permission: 'full_access',
  summary: 'List suppressed addresses, newest first',
  schemas: async () => ({
    query: (await model()).listSuppressionsQuerySchema,
    answer: (await import('../shared/answers.js')).listOf((await answers()).suppressionListItemSchema),
  }),
  access: { actions: ['Query', 'BatchGetItem'], indexes: ['emailsByTime', 'emailsByStatus'] },
} as const satisfies RouteDeclaration;

export const getSuppressionRoute = {
  handler: 'get-suppression',
  method: 'GET',
  path: '/v1/suppressions/{id}',
  permission: 'full_access',
  summary: 'Retrieve one suppressed address (by id or address)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).suppressionSchema }),
  access: { actions: ['GetItem', 'Query'], indexes: ['emailsByTime'] },
} as const satisfies RouteDeclaration;

export const deleteSuppressionRoute = {
  handler: 'delete-suppression',
  method: 'DELETE',
  path: '/v1/suppressions/{id}',
  permission: 'full_access',
  summary: "Take an address off the suppression list (and off SES's)",
  errors: [404],
  schemas: async () => ({ answer: (await answers()).suppressionRemovedSchema }),
  access: {
    actions: ['GetItem', 'Query', 'DeleteItem'],
    indexes: ['emailsByTime'],
    sesSuppressions: true,
  },
} as const satisfies RouteDeclaration;

export const batchAddSuppressionsRoute = {
  handler: 'batch-add-suppressions',
  method: 'POST',
  path: '/v1/suppressions/batch/add',
  permission: 'full_access',
  summary: 'Put up to 100 addresses on the suppression list',
  body: { type: 'json' },
  ok: [201],
  schemas: async () => ({
    body: (await model()).batchAddSuppressionsSchema,
    answer: (await answers()).suppressionsAddedSchema,
  }),
  access: { actions: ['PutItem', 'GetItem'] },
} as const satisfies RouteDeclaration;

export const batchRemoveSuppressionsRoute = {
  handler: 'batch-remove-suppressions',
  method: 'POST',
  path: '/v1/suppressions/batch/remove',
  permission: 'full_access',
  summary: 'Take up to 100 addresses off the suppression list',
  body: { type: 'json' },
  schemas: async () => ({
    body: (await model()).batchRemoveSuppressionsSchema,
    answer: (await answers()).suppressionsRemovedSchema,
  }),
  access: {
    actions: ['GetItem', 'Query', 'DeleteItem'],
    indexes: ['emailsByTime'],
    sesSuppressions: true,
  },
} as const satisfies RouteDeclaration;

export const SUPPRESSION_ROUTES = [
  addSuppressionRoute,
  listSuppressionsRoute,
  getSuppressionRoute,
  deleteSuppressionRoute,
  batchAddSuppressionsRoute,
  batchRemoveSuppressionsRoute,
] as const;
