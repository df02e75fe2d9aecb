import { domainOf } from '../address.js';
import { type SendEmailInput, toContent } from '../email.js';
import {
  fingerprint,
  hashIdempotencyKey,
  idempotencyInProgress,
  idempotencyMismatch,
} from '../idempotency.js';
import { newEmailId } from '../ids.js';
import type { Clock, EmailQueue, EmailRepository, IdempotencyStore, SendJob } from '../ports.js';
import type { EmailStatus } from '../status.js';

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
  /** `queued` for a new email; a resumed request answers the email's status as it is now. */
  status: EmailStatus;
  created_at: string;
}

/**
 * Accepts an email: persist first, then enqueue. Once stored, the email is accepted whatever
 * happens next: if the queue refuses (or the function dies before queueing), the sweeper finds it
 * queued and unsent and puts it on the queue (see sweep.ts). So a client is never told 500 for an
 * email that will still go out.
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
  await enqueueOrLeaveToSweeper(deps, { id, content });
  return { id, status: 'queued', created_at };
}

async function enqueueOrLeaveToSweeper(deps: SendEmailDeps, job: SendJob) {
  try {
    await deps.queue.enqueue(job);
  } catch (error) {
    deps.logError?.('could not queue a stored email; the sweeper will', { id: job.id, error: String(error) });
  }
}

/**
 * `POST /v1/emails` with an `Idempotency-Key`: one email per key and body for 24 hours. The first
 * request claims the key with the id its email will have; a repeat gets the stored answer; another
 * body gets 409; a repeat while the first still runs gets 409 too. If the first request died
 * midway, a repeat resumes it under the same id: it stores the email if it was not stored, queues
 * it if it is still waiting (the consumer's claim keeps it from being sent twice), and answers its
 * status as it is now. A request that fails (the email could not be stored, or was refused) gives
 * the key back, so the client's retry starts afresh.
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
    const existing = begin.outcome === 'resume' ? await deps.emails.getState(id) : null;
    if (existing) {
      // Same key, same body: this request's input is that email's content.
      if (existing.status === 'queued' && !existing.sent_at && existing.send_started_at === undefined)
        await enqueueOrLeaveToSweeper(deps, { id, content: toContent(input) });
      sent = { id, status: existing.status, created_at: existing.created_at };
    } else {
      sent = await sendEmail(deps, input, id);
    }
  } catch (error) {
    await deps.idempotency.abandon(request.scope, keyHash, id).catch(() => undefined);
    throw error;
  }
  // Conditional on the key still being this request's: a key given back and taken by another
  // request meanwhile keeps that request's answer.
  if (!(await deps.idempotency.complete(request.scope, keyHash, id, { statusCode: 200, body: sent })))
    deps.logError?.('idempotency key was taken over before this request finished', { id });
  return sent;
}
