import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listWebhooksQuerySchema, toWebhookListed } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { listWebhooksRoute } from '../webhooks/routes.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/webhooks: `{object: "list", has_more, data}`, newest first (never the secrets). */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, listWebhooksRoute, async ({ query }) => {
    const page = await deps.webhooks.list(parseInput(listWebhooksQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toWebhookListed) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-webhooks', { webhooks: webhookRepository })),
);
