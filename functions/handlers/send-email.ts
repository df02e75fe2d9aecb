import { assertMaySendFrom } from '../api-keys/model.js';
import { type SendEmailInput, sendEmailSchema } from '../emails/email.js';
import { parseIdempotencyKey } from '../emails/idempotency.js';
import type { IdempotencyStore } from '../emails/ports.js';
import { sendEmailRoute } from '../emails/routes.js';
import { loadScheduleReader, parseScheduledAt } from '../emails/schedule.js';
import { type SendEmailDeps, sendEmail, sendEmailOnce } from '../emails/send-email.js';
import { applySendTemplate, namesTemplate } from '../emails/templates-on-first-use.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { domainOf } from '../shared/address.js';
import type { TemplateRepository } from '../templates/ports.js';
import { singleSendDeps } from '../wiring/send-email.js';

/**
 * POST /v1/emails: validate, store as queued, enqueue; 200 with `{id, status, created_at}` (and, when
 * `scheduled_at` is given, `last_event: "scheduled"` and the time; the scheduler queues it then).
 * With `Idempotency-Key`, the same key and body give the same email for 24 hours. With `template`,
 * the published version of that template, rendered with the variables.
 */
export const makeHandler = (
  deps: HttpDeps & SendEmailDeps & { idempotency: IdempotencyStore; templates: TemplateRepository },
) =>
  httpHandler(deps, sendEmailRoute, async ({ body, event, apiKey }) => {
    const idempotencyKey = parseIdempotencyKey(event.headers?.['idempotency-key']);
    // A `template` is rendered once, when the email is accepted (with an Idempotency-Key, once
    // the key is claimed: a replay reads no template): the email's content is what it gave.
    const prepare = async (): Promise<SendEmailInput> => {
      const { body: rendered, template } = await applySendTemplate(deps, body);
      const made = { ...parseInput(sendEmailSchema, rendered), ...(template ? { template } : {}) };
      assertMaySendFrom(apiKey, domainOf(made.from.email));
      await loadScheduleReader(made.scheduled_at);
      return made;
    };
    let input = namesTemplate(body) ? undefined : await prepare();
    // Read against this request's time; the email will be sent with this key's permission, if
    // the key still exists then. With an Idempotency-Key, read only once the key is claimed: a
    // retry after the time has passed gets the first request's answer, not "in the past".
    const schedule = () =>
      input?.scheduled_at === undefined
        ? undefined
        : { at: parseScheduledAt(input.scheduled_at, deps.clock.now()), key_id: apiKey.id };
    const made = async () => {
      input = await prepare();
      return input;
    };
    if (idempotencyKey)
      return {
        statusCode: 200,
        body: await sendEmailOnce(deps, input ?? made, { scope: apiKey.id, idempotencyKey, body }, schedule),
      };
    const ready = input ?? (await made());
    return { statusCode: 200, body: await sendEmail(deps, ready, undefined, schedule()) };
  });

export const handler = lazyHttpHandler(() => makeHandler(singleSendDeps()));
