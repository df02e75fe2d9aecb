import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { DeliveryQueue } from '../webhooks/ports.js';
import { replayWebhookEventRoute } from '../webhooks/routes.js';
import type { WebhookDeps } from '../webhooks/webhooks.js';
import { replayMessage } from '../webhooks/webhooks.js';
import { replayDeps } from '../wiring.js';

/** POST /v1/webhooks/{id}/events/{event_id}/replay: one more attempt, same id; `{object: "webhook_event", id}`. */
export const makeHandler = (deps: HttpDeps & WebhookDeps & { queue: DeliveryQueue }) =>
  httpHandler(deps, replayWebhookEventRoute, async ({ params }) => {
    const message = await replayMessage(deps, params.id ?? '', params.event_id ?? '');
    return { statusCode: 200, body: { object: 'webhook_event', id: message.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(replayDeps()));
