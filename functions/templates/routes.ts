import type { RouteDeclaration } from '../shared/route.js';

/**
 * The templates' routes (shared/route.ts says what a declaration holds; docs.ts has their words).
 * Their access: the template item (versioned PutItem, GetItem), its alias item (conditional PutItem,
 * GetItem, DeleteItem), its published version (PutItem, GetItem); listing (Query).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const shapes = () => import('../shared/answers.js');

export const createTemplateRoute = {
  handler: 'create-template',
  method: 'POST',
  path: '/v1/templates',
  permission: 'full_access',
  summary: 'Create a template (a draft)',
  body: { type: 'json' },
  ok: [201],
  errors: [409],
  schemas: async () => ({
    body: (await model()).createTemplateSchema,
    answer: (await answers()).templateReferenceSchema,
  }),
  access: { actions: ['PutItem', 'GetItem'] },
} as const satisfies RouteDeclaration;

export const listTemplatesRoute = {
  handler: 'list-templates',
  method: 'GET',
  path: '/v1/templates',
  permission: 'full_access',
  summary: 'List templates, newest first',
  schemas: async () => ({
    query: (await model()).listTemplatesQuerySchema,
    answer: (await shapes()).listOf((await answers()).templateListItemSchema),
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getTemplateRoute = {
  handler: 'get-template',
  method: 'GET',
  path: '/v1/templates/{id}',
  permission: 'full_access',
  summary: 'Retrieve a template by id or alias',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).templateSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const updateTemplateRoute = {
  handler: 'update-template',
  method: 'PATCH',
  path: '/v1/templates/{id}',
  permission: 'full_access',
  summary: 'Change a template (a new current version)',
  body: { type: 'json' },
  errors: [404, 409],
  schemas: async () => ({
    body: (await model()).updateTemplateSchema,
    answer: (await answers()).templateReferenceSchema,
  }),
  access: { actions: ['GetItem', 'PutItem', 'DeleteItem'] },
} as const satisfies RouteDeclaration;

// The published version replaced by a tombstone (PutItem), the template and its alias deleted.
export const deleteTemplateRoute = {
  handler: 'delete-template',
  method: 'DELETE',
  path: '/v1/templates/{id}',
  permission: 'full_access',
  summary: 'Remove a template',
  errors: [404],
  schemas: async () => ({ answer: (await shapes()).deletion('template') }),
  access: { actions: ['GetItem', 'PutItem', 'DeleteItem'] },
} as const satisfies RouteDeclaration;

export const publishTemplateRoute = {
  handler: 'publish-template',
  method: 'POST',
  path: '/v1/templates/{id}/publish',
  permission: 'full_access',
  summary: 'Publish the current version (what sends use)',
  errors: [404, 409],
  schemas: async () => ({ answer: (await answers()).templateReferenceSchema }),
  access: { actions: ['GetItem', 'PutItem'] },
} as const satisfies RouteDeclaration;

export const duplicateTemplateRoute = {
  handler: 'duplicate-template',
  method: 'POST',
  path: '/v1/templates/{id}/duplicate',
  permission: 'full_access',
  summary: 'Copy a template into a new draft',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).templateReferenceSchema }),
  access: { actions: ['GetItem', 'PutItem'] },
} as const satisfies RouteDeclaration;

export const TEMPLATE_ROUTES = [
  createTemplateRoute,
  listTemplatesRoute,
  getTemplateRoute,
  updateTemplateRoute,
  deleteTemplateRoute,
  publishTemplateRoute,
  duplicateTemplateRoute,
] as const;
