import type { RouteDeclaration } from '../shared/route.js';

/**
 * Usage's route (shared/route.ts says what a declaration holds; docs.ts has its words). Access: the
 * account's SES limits beside the send schedule (GetItem; never SES's GetAccount, which only the
 * send consumers call), the metrics' day items and current hours (GetItem, Query), the domains
 * (Query).
 */
export const getUsageRoute = {
  handler: 'get-usage',
  method: 'GET',
  path: '/v1/usage',
  permission: 'full_access',
  summary: "The account's usage and limits: SES's 24-hour quota, emails sent and received, domains, rate",
  errors: [503],
  schemas: async () => ({ answer: (await import('./answers.js')).usageSchema }),
  access: { actions: ['GetItem', 'Query'] },
} as const satisfies RouteDeclaration;

export const USAGE_ROUTES = [getUsageRoute] as const;
