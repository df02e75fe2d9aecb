import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listMessagesQuerySchema } from '../webhooks/list-messages-query.js';
import { toAttemptBody, toMessageListed } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { listWebhookEventsRoute } from '../webhooks/routes.js';
import { listMessages, recentAttempts } from '../webhooks/webhooks.js';
import { apiDeps } from '../wiring.js';

/**
 * GET /v1/webhooks/{id}/events: the endpoint's messages, newest first, each with its status; with
 * `include=attempts` (ours), each with its newest attempts too.
 */
export const makeHandler = (deps: HttpDeps & { webhooks: WebhookRepository }) =>
  httpHandler(deps, listWebhookEventsRoute, async ({ params, query }) => {
    const input = parseInput(listMessagesQuerySchema, query);
    const page = await listMessages(deps, params.id ?? '', input);
    const attempts = input.include ? await recentAttempts(deps, page.data) : [];
    const data = page.data.map((message, i) => {
      const listed = toMessageListed(message);
      const recent = attempts[i];
      return recent ? { ...listed, recent_attempts: recent.map(toAttemptBody) } : listed;
    });
    return { statusCode: 200, body: { object: 'list', has_more: page.has_more, data } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-webhook-events', { webhooks: webhookRepository })),
);
