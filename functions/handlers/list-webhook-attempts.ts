import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listAttemptsQuerySchema, toAttemptBody } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { listWebhookAttemptsRoute } from '../webhooks/routes.js';
import { listAttempts } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/**
 * GET /v1/webhooks/{id}/events/{event_id}/attempts: each attempt's time, HTTP status (0: no
 * answer), duration and the first 1 KB of the answer, newest first.
 */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, listWebhookAttemptsRoute, async ({ params, query }) => {
    const page = await listAttempts(
      deps,
      params.id ?? '',
      params.event_id ?? '',
      parseInput(listAttemptsQuerySchema, query),
    );
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toAttemptBody) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-webhook-attempts', { webhooks: webhookRepository })),
);
