import type { RouteDeclaration } from '../shared/route.js';

/**
 * The broadcasts routes (shared/route.ts says what a declaration holds; docs.ts has their words).
 * Every one needs a full-access key. Broadcasts are one partition (PutItem, Query, GetItem,
 * UpdateItem, DeleteItem); a send reads its segment and topic (GetItem), the contact properties
 * its merge tags may name (Query) and its sender's domain (GetItem), and queues the fan-out's first
 * step (SendMessage on the fan-out queue).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const uuidPages = () => import('../shared/uuid-pages.js');

/** What starting a send takes: the fan-out queue. */
/**
 * A create's or update's body: html and text up to MAX_BROADCAST_BODY_BYTES (350 KB) with the
 * other fields, escapes counted (JSON may double a character). The usual limit is 256 KB.
 */
const BODY = { type: 'json', maxBytes: 800 * 1024 } as const;

const SENDS = {
  env: ['BROADCAST_FANOUT_QUEUE_URL'],
  broadcastFanOutQueue: ['SendMessage'],
} as const;

export const createBroadcastRoute = {
  handler: 'create-broadcast',
  method: 'POST',
  path: '/v1/broadcasts',
  permission: 'full_access',
  summary: 'Create a broadcast (a draft, or sent at once or at a time with send: true)',
  body: BODY,
  ok: [201],
  errors: [422],
  schemas: async () => ({
    body: (await model()).createBroadcastSchema,
    answer: (await answers()).broadcastReferenceSchema,
  }),
  access: { actions: ['GetItem', 'Query', 'PutItem', 'UpdateItem'], ...SENDS },
} as const satisfies RouteDeclaration;

export const listBroadcastsRoute = {
  handler: 'list-broadcasts',
  method: 'GET',
  path: '/v1/broadcasts',
  permission: 'full_access',
  summary: 'List broadcasts, newest first',
  schemas: async () => ({
    query: (await uuidPages()).uuidPageQuerySchema,
    answer: (await answers()).broadcastListSchema,
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getBroadcastRoute = {
  handler: 'get-broadcast',
  method: 'GET',
  path: '/v1/broadcasts/{id}',
  permission: 'full_access',
  summary: 'Retrieve a broadcast, with its progress and totals',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).broadcastSchema }),
  // Its item, and its totals: one Query per shard of its counters (adapters/dynamodb/broadcast-tally.ts).
  access: { actions: ['GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const updateBroadcastRoute = {
  handler: 'update-broadcast',
  method: 'PATCH',
  path: '/v1/broadcasts/{id}',
  permission: 'full_access',
  summary: 'Change a draft broadcast',
  body: BODY,
  errors: [404, 409, 422],
  schemas: async () => ({
    body: (await model()).updateBroadcastSchema,
    answer: (await answers()).broadcastReferenceSchema,
  }),
  access: { actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

export const deleteBroadcastRoute = {
  handler: 'delete-broadcast',
  method: 'DELETE',
  path: '/v1/broadcasts/{id}',
  permission: 'full_access',
  summary: 'Delete a draft or a scheduled broadcast (a scheduled one is canceled)',
  errors: [404, 409],
  schemas: async () => ({ answer: (await answers()).broadcastDeletedSchema }),
  access: { actions: ['GetItem', 'DeleteItem'] },
} as const satisfies RouteDeclaration;

export const sendBroadcastRoute = {
  handler: 'send-broadcast',
  method: 'POST',
  path: '/v1/broadcasts/{id}/send',
  permission: 'full_access',
  summary: 'Send a draft broadcast now or at a time',
  body: { type: 'json', optional: true },
  errors: [404, 409, 422],
  schemas: async () => ({
    body: (await model()).sendBroadcastSchema,
    answer: (await answers()).broadcastSentSchema,
  }),
  access: { actions: ['GetItem', 'Query', 'UpdateItem'], ...SENDS },
} as const satisfies RouteDeclaration;

export const cancelBroadcastRoute = {
  handler: 'cancel-broadcast',
  method: 'POST',
  path: '/v1/broadcasts/{id}/cancel',
  permission: 'full_access',
  summary: 'Cancel a scheduled, queued or sending broadcast',
  errors: [404, 409],
  schemas: async () => ({ answer: (await answers()).broadcastReferenceSchema }),
  access: { actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

export const duplicateBroadcastRoute = {
  handler: 'duplicate-broadcast',
  method: 'POST',
  path: '/v1/broadcasts/{id}/duplicate',
  permission: 'full_access',
  summary: 'Duplicate a broadcast as a new draft',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).broadcastReferenceSchema }),
  access: { actions: ['GetItem', 'PutItem'] },
} as const satisfies RouteDeclaration;

export const previewBroadcastRoute = {
  handler: 'preview-broadcast',
  method: 'POST',
  path: '/v1/broadcasts/{id}/preview',
  permission: 'full_access',
  summary: 'Render a broadcast for one contact (ours)',
  body: { type: 'json', optional: true },
  errors: [404],
  schemas: async () => ({
    body: (await model()).previewBroadcastSchema,
    answer: (await answers()).broadcastPreviewSchema,
  }),
  // The broadcast (GetItem), the contact (one or two GetItems), the properties (Query).
  access: { actions: ['GetItem', 'Query'], env: ['PUBLIC_ORIGIN'] },
} as const satisfies RouteDeclaration;

// ---- A broadcast's recipients by type and its clicked links (recipients.ts; its tally's items). ----

const recipients = () => import('./recipients.js');
const recipientAnswers = () => import('./recipient-answers.js');

/**
 * A broadcast's recipients of one type: the broadcast's item (GetItem: 404 when there is none), the
 * partitions of that type (Query, merged by address; one with `email`), and the page's contacts
 * by address for each row's `contact_id` (BatchGetItem).
 */
export const listBroadcastRecipientsRoute = {
  handler: 'list-broadcast-recipients',
  method: 'GET',
  path: '/v1/broadcasts/{id}/recipients',
  permission: 'full_access',
  summary: "A broadcast's recipients of one outcome (sent, delivered, opened, clicked, bounced…), by address",
  errors: [404],
  schemas: async () => ({
    query: (await recipients()).recipientsQuerySchema,
    answer: (await recipientAnswers()).broadcastRecipientsSchema,
  }),
  access: { actions: ['GetItem', 'Query', 'BatchGetItem'] },
} as const satisfies RouteDeclaration;

/** A broadcast's clicked links: its item (GetItem), its partition's link items (Query). */
export const listBroadcastClickedLinksRoute = {
  handler: 'list-broadcast-clicked-links',
  method: 'GET',
  path: '/v1/broadcasts/{id}/clicked-links',
  permission: 'full_access',
  summary: "A broadcast's clicked links: each url's clicks and unique clicks",
  errors: [404],
  schemas: async () => ({
    query: (await recipients()).clickedLinksQuerySchema,
    answer: (await recipientAnswers()).broadcastClickedLinksSchema,
  }),
  access: { actions: ['GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const BROADCAST_RECIPIENT_ROUTES = [
  listBroadcastRecipientsRoute,
  listBroadcastClickedLinksRoute,
] as const;

/** The broadcasts routes (issue 41). */
export const BROADCAST_ROUTES = [
  createBroadcastRoute,
  listBroadcastsRoute,
  getBroadcastRoute,
  updateBroadcastRoute,
  deleteBroadcastRoute,
  sendBroadcastRoute,
  cancelBroadcastRoute,
  duplicateBroadcastRoute,
  previewBroadcastRoute,
  ...BROADCAST_RECIPIENT_ROUTES,
] as const satisfies readonly RouteDeclaration[];
