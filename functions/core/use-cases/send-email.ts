import { domainOf } from '../address.js';
import { contentOf, type SendEmailInput, toContent } from '../email.js';
import {
  fingerprint,
  hashIdempotencyKey,
  idempotencyInProgress,
  idempotencyMismatch,
} from '../idempotency.js';
import { newEmailId } from '../ids.js';
import type { Clock, EmailQueue, EmailRepository, IdempotencyStore } from '../ports.js';

export interface SendEmailDeps {
  emails: EmailRepository;
  queue: EmailQueue;
  clock: Clock;
  /** Refuses a sender domain that is not a verified sending domain of this service (see domains.ts). */
  assertSenderDomain: (domain: string) => Promise<void>;
  logError?: (message: string, fields: Record<string, unknown>) => void;
}

export interface SentEmail {
  id: string;
  status: 'queued';
  created_at: string;
}

/**
 * Accepts an email: persist first, then enqueue, so a queued message always has a record.
 * If the queue refuses, the record is marked failed (never left queued forever) and the caller gets a 500.
 */
export async function sendEmail(
  deps: SendEmailDeps,
  input: SendEmailInput,
  id: string = newEmailId(),
): Promise<SentEmail> {
  await deps.assertSenderDomain(domainOf(input.from.email));
  const created_at = deps.clock.now().toISOString();
  const content = toContent(input);
  await deps.emails.create({ id, created_at, content });
  try {
    await deps.queue.enqueue({ id, content });
  } catch (error) {
    deps.logError?.('enqueue failed; marking email failed', { id, error: String(error) });
    await deps.emails
      .finish(id, 'failed', deps.clock.now().toISOString(), 'could not be queued for sending')
      .catch(() => undefined);
    throw error;
  }
  return { id, status: 'queued', created_at };
}

/**
 * `POST /v1/emails` with an `Idempotency-Key`: one email per key and body for 24 hours. The first
 * request claims the key with the id its email will have; a repeat gets the stored answer; another
 * body gets 409; a repeat while the first still runs gets 409 too. If the first request died
 * midway, a repeat finishes its email under the same id (re-queueing it if it was stored: the
 * consumer's claim keeps it from being sent twice). A failed request gives the key back.
 */
export async function sendEmailOnce(
  deps: SendEmailDeps & { idempotency: IdempotencyStore },
  input: SendEmailInput,
  request: { scope: string; idempotencyKey: string; body: unknown },
): Promise<SentEmail> {
  const keyHash = hashIdempotencyKey(request.idempotencyKey);
  const print = fingerprint(request.body);
  let id = newEmailId();
  const begin = await deps.idempotency.begin(request.scope, keyHash, print, id, deps.clock.now().getTime());
  switch (begin.outcome) {
    case 'replay':
      return begin.response.body as SentEmail;
    case 'mismatch':
      throw idempotencyMismatch();
    case 'in_progress':
      throw idempotencyInProgress();
    case 'resume':
      id = begin.emailId;
      break;
    case 'new':
      break;
  }
  let sent: SentEmail;
  try {
    const existing = begin.outcome === 'resume' ? await deps.emails.get(id) : null;
    if (existing) {
      if (existing.status === 'queued' && !existing.sent_at)
        await deps.queue.enqueue({ id, content: contentOf(existing) });
      sent = { id, status: 'queued', created_at: existing.created_at };
    } else {
      sent = await sendEmail(deps, input, id);
    }
  } catch (error) {
    await deps.idempotency.abandon(request.scope, keyHash, id).catch(() => undefined);
    throw error;
  }
  await deps.idempotency.complete(request.scope, keyHash, { statusCode: 200, body: sent });
  return sent;
}
