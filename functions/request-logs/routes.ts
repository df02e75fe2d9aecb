import type { RouteDeclaration } from '../shared/route.js';

/**
 * The request logs' routes (shared/route.ts says what a declaration holds; docs.ts has their
 * words). Their own reads are not logged. Access (adapters/dynamodb/request-log-items.ts): the
 * table's log partitions (Query), or for an error class the status index (Query) then the page's
 * items (BatchGetItem); after this layout's, the logs of the previous one, from the time index or
 * the status index (Query) then their items (BatchGetItem), and whether a cursor is one of them
 * (GetItem); one by id (GetItem), then the items holding its group's bodies (BatchGetItem).
 */

const reads = () => import('./reads.js');

export const listLogsRoute = {
  handler: 'list-logs',
  method: 'GET',
  path: '/v1/logs',
  permission: 'full_access',
  summary: 'List API request logs, newest first (a filter by status class)',
  errors: [404],
  logged: false,
  schemas: async () => ({
    query: (await reads()).listLogsQuerySchema,
    answer: (await reads()).logListResponseSchema,
  }),
  access: { actions: ['Query', 'GetItem', 'BatchGetItem'], indexes: ['emailsByTime', 'emailsByStatus'] },
} as const satisfies RouteDeclaration;

export const getLogRoute = {
  handler: 'get-log',
  method: 'GET',
  path: '/v1/logs/{id}',
  permission: 'full_access',
  summary: 'Retrieve one request log, with its redacted request and response bodies',
  errors: [404],
  logged: false,
  schemas: async () => ({ answer: (await reads()).logResponseSchema }),
  access: { actions: ['GetItem', 'BatchGetItem'] },
} as const satisfies RouteDeclaration;

export const LOG_ROUTES = [listLogsRoute, getLogRoute] as const;
