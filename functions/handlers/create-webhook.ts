import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { createWebhookSchema } from '../webhooks/model.js';
import type { EndpointGuard } from '../webhooks/ports.js';
import { createWebhookRoute } from '../webhooks/routes.js';
import type { WebhookDeps } from '../webhooks/webhooks.js';
import { createWebhook } from '../webhooks/webhooks.js';
import { webhookApiDeps } from '../wiring/webhooks.js';

/**
 * POST /v1/webhooks `{endpoint, events}`: 201 `{object: "webhook", id, signing_secret}`. The
 * endpoint must be https and resolve to public addresses only.
 */
export const makeHandler = (deps: HttpDeps & WebhookDeps & { guard: EndpointGuard }) =>
  httpHandler(deps, createWebhookRoute, async ({ body }) => {
    const webhook = await createWebhook(deps, parseInput(createWebhookSchema, body));
    return {
      statusCode: 201,
      body: { object: 'webhook', id: webhook.id, signing_secret: webhook.signing_secret },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(webhookApiDeps('create-webhook')));
