import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import type { WebhookRepository } from '../core/ports.js';
import { getMessage } from '../core/use-cases/webhooks.js';
import { toMessageBody } from '../core/webhooks.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/webhooks/{id}/events/{event_id}: one message, its status and its payload as sent. */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, { route: 'get-webhook-event' }, async ({ params }) => ({
    statusCode: 200,
    body: toMessageBody(await getMessage(deps, params.id ?? '', params.event_id ?? '')),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('get-webhook-event', { webhooks: webhookRepository })),
);
