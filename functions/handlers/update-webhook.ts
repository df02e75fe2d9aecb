import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { updateWebhookSchema } from '../webhooks/model.js';
import type { EndpointGuard } from '../webhooks/ports.js';
import { updateWebhookRoute } from '../webhooks/routes.js';
import type { WebhookDeps } from '../webhooks/webhooks.js';
import { updateWebhook } from '../webhooks/webhooks.js';
import { webhookUpdateDeps } from '../wiring/webhook-update.js';

/** PATCH /v1/webhooks/{id} `{endpoint?, events?, status?}`: `{object: "webhook", id}`. */
export const makeHandler = (deps: HttpDeps & WebhookDeps & { guard: EndpointGuard }) =>
  httpHandler(deps, updateWebhookRoute, async ({ params, body }) => {
    const webhook = await updateWebhook(deps, params.id ?? '', parseInput(updateWebhookSchema, body));
    return { statusCode: 200, body: { object: 'webhook', id: webhook.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(webhookUpdateDeps()));
