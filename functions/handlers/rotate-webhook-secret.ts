import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { rotateWebhookSecretRoute } from '../webhooks/routes.js';
import type { WebhookDeps } from '../webhooks/webhooks.js';
import { rotateSigningSecret } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/**
 * POST /v1/webhooks/{id}/signing-secret/rotate: `{object: "webhook", id, signing_secret}`, the new
 * secret; the old one keeps signing beside it for 24 hours.
 */
export const makeHandler = (deps: HttpDeps & WebhookDeps) =>
  httpHandler(deps, rotateWebhookSecretRoute, async ({ params }) => {
    const webhook = await rotateSigningSecret(deps, params.id ?? '');
    return {
      statusCode: 200,
      body: { object: 'webhook', id: webhook.id, signing_secret: webhook.signing_secret },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('rotate-webhook-secret', { webhooks: webhookRepository })),
);
