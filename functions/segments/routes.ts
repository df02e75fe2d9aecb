import type { RouteDeclaration } from '../shared/route.js';

/**
 * The segments routes (shared/route.ts says what a declaration holds; docs.ts has their words):
 * segments, the older audiences (the same items, `object: "audience"`), a contact's segments and a
 * segment's contacts. Every one needs a full-access key. Their access: segments are one partition
 * (PutItem, Query, GetItem, UpdateItem, DeleteItem); a contact by id is two GetItems, by address one;
 * its memberships one Query of its partition; a segment's contacts its shards of the time index
 * (Query) and the page's contacts (BatchGetItem). A deletion hands the memberships to the audience
 * clean-up queue (SendMessage).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');

const CLEANS_UP = {
  env: ['AUDIENCE_CLEANUP_QUEUE_URL'],
  audienceCleanupQueue: ['SendMessage'],
} as const;

export const createSegmentRoute = {
  handler: 'create-segment',
  method: 'POST',
  path: '/v1/segments',
  permission: 'full_access',
  summary: 'Create a segment',
  body: { type: 'json' },
  ok: [201],
  schemas: async () => ({
    body: (await model()).createSegmentSchema,
    answer: (await answers()).segmentCreatedSchema,
  }),
  access: { actions: ['PutItem'] },
} as const satisfies RouteDeclaration;

export const listSegmentsRoute = {
  handler: 'list-segments',
  method: 'GET',
  path: '/v1/segments',
  permission: 'full_access',
  summary: 'List segments, newest first',
  schemas: async () => ({
    query: (await model()).uuidPageQuerySchema,
    answer: (await answers()).segmentListSchema,
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getSegmentRoute = {
  handler: 'get-segment',
  method: 'GET',
  path: '/v1/segments/{id}',
  permission: 'full_access',
  summary: 'Retrieve a segment',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).segmentSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const updateSegmentRoute = {
  handler: 'update-segment',
  method: 'PATCH',
  path: '/v1/segments/{id}',
  permission: 'full_access',
  summary: 'Rename a segment',
  body: { type: 'json' },
  errors: [404],
  schemas: async () => ({
    body: (await model()).updateSegmentSchema,
    answer: (await answers()).segmentSchema,
  }),
  access: { actions: ['UpdateItem'] },
} as const satisfies RouteDeclaration;

export const deleteSegmentRoute = {
  handler: 'delete-segment',
  method: 'DELETE',
  path: '/v1/segments/{id}',
  permission: 'full_access',
  summary: 'Delete a segment (its contacts stay)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).segmentDeletedSchema }),
  access: { actions: ['DeleteItem'], ...CLEANS_UP },
} as const satisfies RouteDeclaration;

export const listSegmentContactsRoute = {
  handler: 'list-segment-contacts',
  method: 'GET',
  path: '/v1/segments/{id}/contacts',
  permission: 'full_access',
  summary: "List a segment's contacts, newest first",
  errors: [404],
  schemas: async () => ({
    query: (await model()).uuidPageQuerySchema,
    answer: (await answers()).segmentContactListSchema,
  }),
  access: { actions: ['GetItem', 'Query', 'BatchGetItem'], indexes: ['emailsByTime'] },
} as const satisfies RouteDeclaration;

export const createAudienceRoute = {
  handler: 'create-audience',
  method: 'POST',
  path: '/v1/audiences',
  permission: 'full_access',
  summary: 'Create an audience (a segment)',
  body: { type: 'json' },
  ok: [201],
  schemas: async () => ({
    body: (await model()).createAudienceSchema,
    answer: (await answers()).audienceCreatedSchema,
  }),
  access: { actions: ['PutItem'] },
} as const satisfies RouteDeclaration;

export const listAudiencesRoute = {
  handler: 'list-audiences',
  method: 'GET',
  path: '/v1/audiences',
  permission: 'full_access',
  summary: 'List audiences (the segments), newest first',
  schemas: async () => ({
    query: (await model()).uuidPageQuerySchema,
    answer: (await answers()).audienceListSchema,
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getAudienceRoute = {
  handler: 'get-audience',
  method: 'GET',
  path: '/v1/audiences/{id}',
  permission: 'full_access',
  summary: 'Retrieve an audience (a segment)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).audienceSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

export const deleteAudienceRoute = {
  handler: 'delete-audience',
  method: 'DELETE',
  path: '/v1/audiences/{id}',
  permission: 'full_access',
  summary: 'Delete an audience (a segment; its contacts stay)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).audienceDeletedSchema }),
  access: { actions: ['DeleteItem'], ...CLEANS_UP },
} as const satisfies RouteDeclaration;

export const listContactSegmentsRoute = {
  handler: 'list-contact-segments',
  method: 'GET',
  path: '/v1/contacts/{id}/segments',
  permission: 'full_access',
  summary: "List a contact's segments (the contact by id or address)",
  errors: [404],
  schemas: async () => ({
    query: (await model()).uuidPageQuerySchema,
    answer: (await answers()).contactSegmentListSchema,
  }),
  access: { actions: ['GetItem', 'Query', 'BatchGetItem'] },
} as const satisfies RouteDeclaration;

export const addContactSegmentRoute = {
  handler: 'add-contact-segment',
  method: 'POST',
  path: '/v1/contacts/{id}/segments/{segment_id}',
  permission: 'full_access',
  summary: 'Add a contact to a segment (the contact by id or address)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).contactSegmentSchema }),
  access: { actions: ['GetItem', 'PutItem'] },
} as const satisfies RouteDeclaration;

export const removeContactSegmentRoute = {
  handler: 'remove-contact-segment',
  method: 'DELETE',
  path: '/v1/contacts/{id}/segments/{segment_id}',
  permission: 'full_access',
  summary: 'Take a contact out of a segment (the contact by id or address)',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).contactSegmentRemovedSchema }),
  access: { actions: ['GetItem', 'DeleteItem'] },
} as const satisfies RouteDeclaration;

export const SEGMENT_ROUTES = [
  createSegmentRoute,
  listSegmentsRoute,
  getSegmentRoute,
  updateSegmentRoute,
  deleteSegmentRoute,
  listSegmentContactsRoute,
  createAudienceRoute,
  listAudiencesRoute,
  getAudienceRoute,
  deleteAudienceRoute,
  listContactSegmentsRoute,
  addContactSegmentRoute,
  removeContactSegmentRoute,
] as const satisfies readonly RouteDeclaration[];
