import { domainRepository, metricsStore, sendQuotaStore } from '../adapters/dynamodb/repositories.js';
import { DEFAULT_RATE_LIMIT } from '../api-keys/rate-limit.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { readUsage, type UsageDeps } from '../usage/read.js';
import { getUsageRoute } from '../usage/routes.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/usage: SDK 6.38's usage, from the stored SES limits and our counters (docs/api.md, "Usage"). */
export const makeHandler = (deps: HttpDeps & Omit<UsageDeps, 'ratePerSecond'>) =>
  httpHandler(deps, getUsageRoute, async () => ({
    statusCode: 200,
    body: await readUsage({ ...deps, ratePerSecond: deps.rateLimit?.perSecond ?? DEFAULT_RATE_LIMIT }),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(
    apiDeps('get-usage', { quota: sendQuotaStore, metrics: metricsStore, domains: domainRepository }),
  ),
);
