import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { deleteWebhookRoute } from '../webhooks/routes.js';
import { deleteWebhook } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/**
 * DELETE /v1/webhooks/{id}: `{object: "webhook", id, deleted: true}`. Messages already queued for
 * it are dropped when their turn comes.
 */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, deleteWebhookRoute, async ({ params }) => {
    const id = params.id ?? '';
    await deleteWebhook(deps, id);
    return { statusCode: 200, body: { object: 'webhook', id, deleted: true } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('delete-webhook', { webhooks: webhookRepository })),
);
