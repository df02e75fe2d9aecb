import { type AcceptDeps, acceptBatch } from '../emails/accept-send.js';
import { parseBatchValidation } from '../emails/batch.js';
import { parseIdempotencyKey } from '../emails/idempotency.js';
import { sendBatchRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { sendEmailDeps } from '../wiring.js';

/**
 * POST /v1/emails/batch: 1 to 100 emails → 200 `{data: [{id}, …]}` in input order (permissive
 * mode adds `errors: [{index, message}]`). One request against the key's rate limit; with
 * `Idempotency-Key`, the same batch gives the same ids (emails/accept-send.ts).
 */
export const makeHandler = (deps: HttpDeps & AcceptDeps) =>
  httpHandler(deps, sendBatchRoute, async ({ body, event, apiKey }) => ({
    statusCode: 200,
    body: await acceptBatch(deps, {
      body,
      apiKey,
      idempotencyKey: parseIdempotencyKey(event.headers?.['idempotency-key']),
      mode: parseBatchValidation(event.headers?.['x-batch-validation']),
    }),
  }));

export const handler = lazyHttpHandler(() => makeHandler(sendEmailDeps('send-batch')));
