import type { EndpointGuard } from '../core/ports.js';
import type { WebhookDeps } from '../core/use-cases/webhooks.js';
import { updateWebhook } from '../core/use-cases/webhooks.js';
import { updateWebhookSchema } from '../core/webhooks.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { webhookUpdateDeps } from '../wiring/webhook-update.js';

/** PATCH /v1/webhooks/{id} `{endpoint?, events?, status?}`: `{object: "webhook", id}`. */
export const makeHandler = (deps: HttpDeps & WebhookDeps & { guard: EndpointGuard }) =>
  httpHandler(deps, { route: 'update-webhook', jsonBody: true }, async ({ params, body }) => {
    const webhook = await updateWebhook(deps, params.id ?? '', parseInput(updateWebhookSchema, body));
    return { statusCode: 200, body: { object: 'webhook', id: webhook.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(webhookUpdateDeps()));
