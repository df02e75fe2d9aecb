import { broadcastNames, domainRepository, metricsStore } from '../adapters/dynamodb/repositories.js';
import type { DomainRepository } from '../domains/ports.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import type { BroadcastNames, MetricsReader } from '../metrics/ports.js';
import { emailMetricsQuerySchema } from '../metrics/query.js';
import { readEmailMetrics } from '../metrics/read.js';
import { getEmailMetricsRoute } from '../metrics/routes.js';
import type { Clock } from '../shared/ports.js';
import { apiDeps } from '../wiring.js';

/**
 * GET /v1/emails/metrics?start_date&end_date&timezone&granularity&metrics&dimensions&domain_id&broadcast_id:
 * Resend's `{object: "metrics", …, totals, data?}` (docs/metrics.md).
 */
export const makeHandler = (
  deps: HttpDeps & {
    metrics: MetricsReader;
    domains: Pick<DomainRepository, 'get' | 'all'>;
    broadcasts?: BroadcastNames;
    clock: Clock;
  },
) =>
  httpHandler(deps, getEmailMetricsRoute, async ({ query }) => ({
    statusCode: 200,
    body: await readEmailMetrics(deps, parseInput(emailMetricsQuerySchema, query)),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(
    apiDeps('get-email-metrics', {
      metrics: metricsStore,
      domains: domainRepository,
      broadcasts: broadcastNames,
    }),
  ),
);
