import { PUBLISHES } from '../shared/function-spec.js';
import type { RouteDeclaration } from '../shared/route.js';

/**
 * The contacts' routes (shared/route.ts says what a declaration holds; docs.ts has their words),
 * and the audience-scoped ones SDK 6.38 calls when given `audienceId` (an audience is a segment).
 * Every audience route needs a full-access key. Their access: a contact item by address and an id
 * item by id (GetItem; PutItem, DeleteItem, conditional; an address change in one TransactWriteItems), what a create writes beside
 * it (BatchWriteItem), the segments, topics and properties read (BatchGetItem, Query), a contact's
 * memberships (Query of its partition), the listings through the time index (Query, then
 * BatchGetItem), and the events: the endpoints (Query) and the events kept when the queue refuses
 * (PutItem).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const listQuery = () => import('./list-query.js');
const list = async () =>
  (await import('../shared/answers.js')).listOf((await answers()).contactListItemSchema);

const CREATES = {
  ...PUBLISHES,
  env: ['WEBHOOK_QUEUE_URL'],
  actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'BatchWriteItem'],
} as const;

const LISTS = { actions: ['GetItem', 'Query', 'BatchGetItem'], indexes: ['emailsByTime'] } as const;

const READS = { actions: ['GetItem', 'Query'] } as const;

// A change puts the contact over its version (PutItem); an address change is one TransactWriteItems
// of a Delete and two Puts, granted as those items' own actions (DeleteItem, PutItem: AWS's "Using
// IAM with DynamoDB transactions"; no ConditionCheck item, so no ConditionCheckItem).
const UPDATES = {
  ...PUBLISHES,
  env: ['WEBHOOK_QUEUE_URL'],
  actions: ['GetItem', 'Query', 'PutItem', 'DeleteItem'],
} as const;

// An event that could not be published is kept with UpdateItem (every API function's own grant).
const DELETES = {
  ...PUBLISHES,
  env: ['WEBHOOK_QUEUE_URL', 'AUDIENCE_CLEANUP_QUEUE_URL'],
  audienceCleanupQueue: ['SendMessage'],
  actions: ['GetItem', 'Query', 'DeleteItem'],
} as const;

export const createContactRoute = {
  handler: 'create-contact',
  method: 'POST',
  path: '/v1/contacts',
  permission: 'full_access',
  summary: 'Create a contact, with its segments and topic choices',
  body: { type: 'json' },
  ok: [201, 200],
  errors: [409],
  schemas: async () => ({
    body: (await model()).createContactSchema,
    answer: (await answers()).contactReferenceSchema,
  }),
  access: CREATES,
} as const satisfies RouteDeclaration;

export const listContactsRoute = {
  handler: 'list-contacts',
  method: 'GET',
  path: '/v1/contacts',
  permission: 'full_access',
  summary: "List contacts, or one segment's members, newest first",
  errors: [404],
  schemas: async () => ({ query: (await listQuery()).listContactsQuerySchema, answer: await list() }),
  access: LISTS,
} as const satisfies RouteDeclaration;

export const getContactRoute = {
  handler: 'get-contact',
  method: 'GET',
  path: '/v1/contacts/{id}',
  permission: 'full_access',
  summary: 'Retrieve a contact (by id or address)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).contactSchema }),
  access: READS,
} as const satisfies RouteDeclaration;

export const updateContactRoute = {
  handler: 'update-contact',
  method: 'PATCH',
  path: '/v1/contacts/{id}',
  permission: 'full_access',
  summary: 'Update a contact (by id or address)',
  body: { type: 'json' },
  errors: [404, 409],
  schemas: async () => ({
    body: (await import('./update-schema.js')).updateContactSchema,
    answer: (await answers()).contactReferenceSchema,
  }),
  access: UPDATES,
} as const satisfies RouteDeclaration;

export const deleteContactRoute = {
  handler: 'delete-contact',
  method: 'DELETE',
  path: '/v1/contacts/{id}',
  permission: 'full_access',
  summary: 'Delete a contact (by id or address)',
  errors: [404, 409],
  schemas: async () => ({ answer: (await answers()).contactRemovedSchema }),
  access: DELETES,
} as const satisfies RouteDeclaration;

/*
 * The audience-scoped routes. API Gateway refuses two path variables of different names at one
 * level (ConflictException "conflicting variable on the same hierarchical level"), so the
 * audience is `{id}` as in `/v1/audiences/{id}`, and the contact `{contact_id}`.
 */

export const createAudienceContactRoute = {
  handler: 'create-audience-contact',
  method: 'POST',
  path: '/v1/audiences/{id}/contacts',
  permission: 'full_access',
  summary: 'Create a contact in an audience (a segment)',
  body: { type: 'json' },
  ok: [201, 200],
  errors: [404, 409],
  schemas: async () => ({
    body: (await model()).createContactSchema,
    answer: (await answers()).contactReferenceSchema,
  }),
  access: CREATES,
} as const satisfies RouteDeclaration;

export const listAudienceContactsRoute = {
  handler: 'list-audience-contacts',
  method: 'GET',
  path: '/v1/audiences/{id}/contacts',
  permission: 'full_access',
  summary: "List an audience's (a segment's) contacts, newest first",
  errors: [404],
  schemas: async () => ({ query: (await listQuery()).listAudienceContactsQuerySchema, answer: await list() }),
  access: LISTS,
} as const satisfies RouteDeclaration;

export const getAudienceContactRoute = {
  handler: 'get-audience-contact',
  method: 'GET',
  path: '/v1/audiences/{id}/contacts/{contact_id}',
  permission: 'full_access',
  summary: "Retrieve one of an audience's contacts (by id or address)",
  errors: [404],
  schemas: async () => ({ answer: (await answers()).contactSchema }),
  access: READS,
} as const satisfies RouteDeclaration;

export const updateAudienceContactRoute = {
  handler: 'update-audience-contact',
  method: 'PATCH',
  path: '/v1/audiences/{id}/contacts/{contact_id}',
  permission: 'full_access',
  summary: "Update one of an audience's contacts (by id or address)",
  body: { type: 'json' },
  errors: [404, 409],
  schemas: async () => ({
    body: (await import('./update-schema.js')).updateContactSchema,
    answer: (await answers()).contactReferenceSchema,
  }),
  access: UPDATES,
} as const satisfies RouteDeclaration;

export const deleteAudienceContactRoute = {
  handler: 'delete-audience-contact',
  method: 'DELETE',
  path: '/v1/audiences/{id}/contacts/{contact_id}',
  permission: 'full_access',
  summary: "Delete one of an audience's contacts (by id or address)",
  errors: [404, 409],
  schemas: async () => ({ answer: (await answers()).contactRemovedSchema }),
  access: DELETES,
} as const satisfies RouteDeclaration;

/** The contacts routes (issue 40). */
export const CONTACT_ROUTES = [
  createContactRoute,
  listContactsRoute,
  getContactRoute,
  updateContactRoute,
  deleteContactRoute,
  createAudienceContactRoute,
  listAudienceContactsRoute,
  getAudienceContactRoute,
  updateAudienceContactRoute,
  deleteAudienceContactRoute,
] as const satisfies readonly RouteDeclaration[];
