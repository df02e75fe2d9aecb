import type { RouteDeclaration } from '../shared/route.js';

/** The metrics' route (shared/route.ts says what a declaration holds; docs.ts has its words). */

// The roll-up's mark (GetItem), the day items and the current hours' counter shards (Query); the
// domains by id (GetItem) or all of them (Query) for their ids; the broadcasts' names (BatchGetItem).
export const getEmailMetricsRoute = {
  handler: 'get-email-metrics',
  method: 'GET',
  path: '/v1/emails/metrics',
  permission: 'full_access',
  summary:
    'Email metrics: sent, delivered, bounced, opened… and their rates, by period, domain and broadcast',
  errors: [503],
  schemas: async () => ({
    query: (await import('./query.js')).emailMetricsQuerySchema,
    answer: (await import('./answers.js')).emailMetricsSchema,
  }),
  access: { actions: ['BatchGetItem', 'GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const METRICS_ROUTES = [getEmailMetricsRoute] as const;
