import { assertMaySendFrom } from '../api-keys/model.js';
import { loadBatchScheduleReader, parseBatch, parseBatchValidation } from '../emails/batch.js';
import { parseIdempotencyKey } from '../emails/idempotency.js';
import type { IdempotencyStore } from '../emails/ports.js';
import { sendBatchRoute } from '../emails/routes.js';
import { sendBatch, sendBatchOnce, senderDomainOf } from '../emails/send-batch.js';
import type { SendEmailDeps } from '../emails/send-email.js';
import { applyBatchTemplates } from '../emails/templates-on-first-use.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { TemplateRepository } from '../templates/ports.js';
import { sendEmailDeps } from '../wiring.js';

/**
 * POST /v1/emails/batch: 1 to 100 emails → 200 `{data: [{id}, …]}` in input order (permissive
 * mode adds `errors: [{index, message}]`). One request against the key's rate limit; with
 * `Idempotency-Key`, the same batch gives the same ids.
 */
export const makeHandler = (
  deps: HttpDeps & SendEmailDeps & { idempotency: IdempotencyStore; templates: TemplateRepository },
) =>
  httpHandler(deps, sendBatchRoute, async ({ body, event, apiKey }) => {
    const idempotencyKey = parseIdempotencyKey(event.headers?.['idempotency-key']);
    const mode = parseBatchValidation(event.headers?.['x-batch-validation']);
    // Emails with `template` rendered once, when accepted (with an Idempotency-Key, once the key
    // is claimed: a replay reads no template), each template read once.
    // Read against this request's time (each `scheduled_at`); with an Idempotency-Key, once the
    // key is claimed, so that a retry after a time has passed gets the first request's answer.
    const request = async () => {
      const { body: rendered, templates } = await applyBatchTemplates(deps, body);
      await loadBatchScheduleReader(rendered);
      const { entries, errors } = parseBatch(rendered, mode, deps.clock.now(), templates);
      return {
        entries,
        errors,
        mode,
        keyId: apiKey.id,
        checkSender: async (input: Parameters<typeof senderDomainOf>[0]) => {
          const domain = senderDomainOf(input);
          assertMaySendFrom(apiKey, domain);
          await deps.assertSenderDomain(domain);
        },
      };
    };
    const answer = idempotencyKey
      ? await sendBatchOnce(deps, request, mode, { scope: apiKey.id, idempotencyKey, body })
      : await sendBatch(deps, await request());
    return { statusCode: 200, body: answer };
  });

export const handler = lazyHttpHandler(() => makeHandler(sendEmailDeps('send-batch')));
