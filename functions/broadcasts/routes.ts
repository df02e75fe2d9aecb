import type { RouteDeclaration } from '../shared/route.js';

/** The broadcasts routes (issue 41; shared/route.ts says what a declaration holds). */

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

export const BROADCAST_ROUTES = [
  ...BROADCAST_RECIPIENT_ROUTES,
] as const satisfies readonly RouteDeclaration[];
