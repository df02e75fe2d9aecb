import { type ApiKey, assertMaySendFrom } from '../api-keys/model.js';
import { domainOf } from '../shared/address.js';
import type { FieldError } from '../shared/errors.js';
import { parseInput } from '../shared/parse.js';
import type { TemplateRepository } from '../templates/ports.js';
import type { MimeSendRequest } from './accept-mime.js';
import { type BatchValidation, loadBatchScheduleReader, parseBatch } from './batch.js';
import { type SendEmailInput, sendEmailSchema, type TemplateUse } from './email.js';
import { namesTemplate } from './names-template.js';
import type { IdempotencyStore } from './ports.js';
import { loadScheduleReader, parseScheduledAt } from './schedule.js';
import { sendBatch, sendBatchOnce, senderDomainOf } from './send-batch.js';
import { type SendEmailDeps, type SentEmail, sendEmail, sendEmailOnce } from './send-email.js';

/**
 * Accepting a send, as POST /v1/emails and POST /v1/emails/batch do, apart from HTTP: a `template`
 * rendered into the body, the idempotency key claimed, the body parsed and checked (the key's
 * domain, the sender's), then the email stored and queued. With an Idempotency-Key, the template is
 * rendered and `scheduled_at` read only once the key is claimed: a replay reads no template, and a
 * retry after the time has passed gets the first request's answer, not "in the past".
 */
export interface AcceptDeps extends SendEmailDeps {
  idempotency: IdempotencyStore;
  templates: TemplateRepository;
}

export interface SendRequest {
  body: unknown;
  /** The key the request came with: the email is sent with its permission, if it still exists then. */
  apiKey: ApiKey;
  /** The request's Idempotency-Key (parsed). */
  idempotencyKey?: string;
}

/** The templates' code, loaded by the first send that names one. */
const templating = () => import('./send-templates.js');

/** POST /v1/emails: one email, by its own content or a template's. */
export async function acceptEmail(deps: AcceptDeps, request: SendRequest): Promise<SentEmail> {
  const { body, apiKey, idempotencyKey } = request;
  // A `template` is rendered once, when the email is accepted: the email's content is what it gave.
  const prepare = async (): Promise<SendEmailInput> => {
    const { body: rendered, template } = namesTemplate(body)
      ? await (await templating()).applySendTemplate(deps, body)
      : { body, template: undefined };
    const made = { ...parseInput(sendEmailSchema, rendered), ...(template ? { template } : {}) };
    assertMaySendFrom(apiKey, domainOf(made.from.email));
    await loadScheduleReader(made.scheduled_at);
    return made;
  };
  // Without a template the body is checked before the key is claimed (a bad body claims nothing).
  let input = namesTemplate(body) ? undefined : await prepare();
  const schedule = () =>
    input?.scheduled_at === undefined
      ? undefined
      : { at: parseScheduledAt(input.scheduled_at, deps.clock.now()), key_id: apiKey.id };
  const made = async () => {
    input = await prepare();
    return input;
  };
  if (idempotencyKey)
    return sendEmailOnce(deps, input ?? made, { scope: apiKey.id, idempotencyKey, body }, schedule);
  const ready = input ?? (await made());
  return sendEmail(deps, ready, undefined, schedule());
}

/** POST /v1/emails/batch: 1 to 100 emails, `mode` saying what one invalid email does to the rest. */
export async function acceptBatch(
  deps: AcceptDeps,
  request: SendRequest & { mode: BatchValidation },
): Promise<Awaited<ReturnType<typeof sendBatch>>> {
  const { body, apiKey, idempotencyKey, mode } = request;
  const prepare = async () => {
    // Each template read once, each email rendered once, when accepted.
    const { body: rendered, templates } =
      Array.isArray(body) && body.some(namesTemplate)
        ? await (await templating()).applyBatchTemplates(deps, body)
        : { body, templates: new Map<number, { template: TemplateUse } | { errors: FieldError[] }>() };
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
  return idempotencyKey
    ? sendBatchOnce(deps, prepare, mode, { scope: apiKey.id, idempotencyKey, body })
    : sendBatch(deps, await prepare());
}

export type { MimeSendRequest } from './accept-mime.js';

/**
 * An SMTP message becomes an email, with the checks, idempotency, storage and queueing of
 * `POST /v1/emails` (issue 42): `Resend-Idempotency-Key` is its Idempotency-Key; without one, its
 * `Message-ID` (with the key) is an implicit one for 24 hours. Its MIME is kept and sent as it is
 * (content.ts `mime`); its parts are parsed for the API. Throws ApiError as the API's use cases do.
 * Its code (and postal-mime) is loaded by the first SMTP message: the API's sends never load it.
 */
export async function acceptMime(deps: AcceptDeps, request: MimeSendRequest): Promise<SentEmail> {
  return (await import('./accept-mime.js')).acceptMimeMessage(deps, request);
}
