import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toMessageBody } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { getWebhookEventRoute } from '../webhooks/routes.js';
import { getMessage } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/webhooks/{id}/events/{event_id}: one message, its status and its payload as sent. */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, getWebhookEventRoute, async ({ params }) => ({
    statusCode: 200,
    body: toMessageBody(await getMessage(deps, params.id ?? '', params.event_id ?? '')),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('get-webhook-event', { webhooks: webhookRepository })),
);
