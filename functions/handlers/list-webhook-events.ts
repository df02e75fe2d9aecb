import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listMessagesQuerySchema, toMessageListed } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { listWebhookEventsRoute } from '../webhooks/routes.js';
import { listMessages } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/webhooks/{id}/events: the endpoint's messages, newest first, each with its status. */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, listWebhookEventsRoute, async ({ params, query }) => {
    const page = await listMessages(deps, params.id ?? '', parseInput(listMessagesQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toMessageListed) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-webhook-events', { webhooks: webhookRepository })),
);
