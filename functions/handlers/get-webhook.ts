import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toWebhookBody } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { getWebhookRoute } from '../webhooks/routes.js';
import { getWebhook } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/webhooks/{id}: the endpoint with its signing secret (as Resend shows it) and why it is disabled. */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, getWebhookRoute, async ({ params }) => ({
    statusCode: 200,
    body: toWebhookBody(await getWebhook(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('get-webhook', { webhooks: webhookRepository })),
);
