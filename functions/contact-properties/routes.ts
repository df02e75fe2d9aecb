import type { RouteDeclaration } from '../shared/route.js';

/**
 * The contact properties' routes (shared/route.ts says what a declaration holds; docs.ts has their
 * words). A property is one item in one partition (Query lists it), with an item per key that
 * keeps keys unique (PutItem, conditional; GetItem when a key's item names a property that is gone).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const shared = () => import('../shared/answers.js');

export const createContactPropertyRoute = {
  handler: 'create-contact-property',
  method: 'POST',
  path: '/v1/contact-properties',
  permission: 'full_access',
  summary: 'Create a contact property',
  body: { type: 'json' },
  ok: [201],
  errors: [409],
  schemas: async () => ({
    body: (await model()).createPropertySchema,
    answer: (await shared()).reference('contact_property'),
  }),
  access: { actions: ['PutItem', 'GetItem'] },
} as const satisfies RouteDeclaration;

export const listContactPropertiesRoute = {
  handler: 'list-contact-properties',
  method: 'GET',
  path: '/v1/contact-properties',
  permission: 'full_access',
  summary: 'List contact properties, newest first',
  schemas: async () => ({
    query: (await import('../shared/uuid-pages.js')).uuidPageQuerySchema,
    answer: (await shared()).listOf((await answers()).contactPropertyListItemSchema),
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getContactPropertyRoute = {
  handler: 'get-contact-property',
  method: 'GET',
  path: '/v1/contact-properties/{id}',
  permission: 'full_access',
  summary: 'Retrieve one contact property',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).contactPropertySchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const updateContactPropertyRoute = {
  handler: 'update-contact-property',
  method: 'PATCH',
  path: '/v1/contact-properties/{id}',
  permission: 'full_access',
  summary: "Change a contact property's fallback value",
  body: { type: 'json' },
  errors: [404],
  schemas: async () => ({
    body: (await model()).updatePropertySchema,
    answer: (await shared()).reference('contact_property'),
  }),
  access: { actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

export const deleteContactPropertyRoute = {
  handler: 'delete-contact-property',
  method: 'DELETE',
  path: '/v1/contact-properties/{id}',
  permission: 'full_access',
  summary: 'Delete a contact property (and so every value of it, with no scan)',
  errors: [404],
  schemas: async () => ({ answer: (await shared()).deletion('contact_property') }),
  access: { actions: ['DeleteItem'] },
} as const satisfies RouteDeclaration;

/** The contact-properties routes (issue 40; shared/route.ts says what a declaration holds). */
export const CONTACT_PROPERTY_ROUTES = [
  createContactPropertyRoute,
  listContactPropertiesRoute,
  getContactPropertyRoute,
  updateContactPropertyRoute,
  deleteContactPropertyRoute,
] as const;
