import { type AcceptDeps, acceptEmail } from '../emails/accept-send.js';
import { parseIdempotencyKey } from '../emails/idempotency.js';
import { sendEmailRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { singleSendDeps } from '../wiring/send-email.js';

/**
 * POST /v1/emails: 200 with `{id, status, created_at}` (and, when `scheduled_at` is given,
 * `last_event: "scheduled"` and the time; the scheduler queues it then). With `Idempotency-Key`,
 * the same key and body give the same email for 24 hours. With `template`, the published version
 * of that template, rendered with the variables (emails/accept-send.ts).
 */
export const makeHandler = (deps: HttpDeps & AcceptDeps) =>
  httpHandler(deps, sendEmailRoute, async ({ body, event, apiKey }) => ({
    statusCode: 200,
    body: await acceptEmail(deps, {
      body,
      apiKey,
      idempotencyKey: parseIdempotencyKey(event.headers?.['idempotency-key']),
    }),
  }));

export const handler = lazyHttpHandler(() => makeHandler(singleSendDeps()));
