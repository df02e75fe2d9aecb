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
 * queued and unsent and puts it on the queue (see sweep.ts). A store whose answer was lost but
 * which landed counts as stored. So a client is never told 500 for an email that will go out.
 */
export async function sendEmail(
  deps: SendEmailDeps,
  input: SendEmailInput,
  id: string = newEmailId(),
): Promise<SentEmail> {
  await deps.assertSenderDomain(domainOf(input.from.email));
  const created_at = deps.clock.now().toISOString();
  const content = toContent(input);
  try {
    await deps.emails.create({ id, created_at, content });
  } catch (error) {
    if (!(await storedState(deps.emails, id))) throw error;
  }
  await enqueueOrLeaveToSweeper(deps, { id, content });
  return { id, status: 'queued', created_at };
}

/** The email's status item; null when it is not stored; undefined when the table cannot tell. */
const storedState = (emails: EmailRepository, id: string) =>
  emails.getState(id).then(
    (state) => state,
    () => undefined,
  );

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
 * body gets 409; a repeat while the first still runs gets 409 too.
 *
 * If the first request died midway, a repeat resumes it: when its email was stored, the answer is
 * that email as it is now (queued again if it is still waiting: the consumer's attempt record keeps
 * it from being sent twice); when it was not, the email is stored under a new id, moved onto the
 * key (an id as old as the dead request could sort behind where the sweeper has already looked).
 *
 * The key is given back only when its email is known not to be stored (a refused sender domain, a
 * store that failed), so the client's retry starts afresh; when the table cannot even tell, the key
 * stays held and a retry after the lease resumes.
 */
export async function sendEmailOnce(
  deps: SendEmailDeps & { idempotency: IdempotencyStore },
  input: SendEmailInput,
  request: { scope: string; idempotencyKey: string; body: unknown },
): Promise<SentEmail> {
  const keyHash = hashIdempotencyKey(request.idempotencyKey);
  const print = fingerprint(request.body);
  const id = newEmailId();
  const begin = await deps.idempotency.begin(request.scope, keyHash, print, id, deps.clock.now().getTime());
  switch (begin.outcome) {
    case 'replay':
      return begin.response.body as SentEmail;
    case 'mismatch':
      throw idempotencyMismatch();
    case 'in_progress':
      throw idempotencyInProgress();
    case 'resume':
    case 'new':
      break;
  }
  let keyEmailId = begin.outcome === 'resume' ? begin.emailId : id;
  let sent: SentEmail;
  try {
    const existing = begin.outcome === 'resume' ? await deps.emails.getState(begin.emailId) : null;
    if (existing) {
      // Same key, same body: this request's input is that email's content.
      if (existing.status === 'queued' && !existing.sent_at && existing.send_started_at === undefined)
        await enqueueOrLeaveToSweeper(deps, { id: existing.id, content: toContent(input) });
      sent = { id: existing.id, status: existing.status, created_at: existing.created_at };
    } else {
      if (begin.outcome === 'resume') {
        if (!(await deps.idempotency.reassign(request.scope, keyHash, begin.emailId, id)))
          throw idempotencyInProgress();
        keyEmailId = id;
      }
      sent = await sendEmail(deps, input, id);
    }
  } catch (error) {
    if (keyEmailId !== id) throw error; // the key still names the dead request's email: left as it was
    const stored = await storedState(deps.emails, id);
    if (stored === null) await deps.idempotency.abandon(request.scope, keyHash, id).catch(() => undefined);
    if (!stored) throw error;
    sent = { id, status: stored.status, created_at: stored.created_at };
  }
  // The answer is the email's whatever happens to the key: if storing it fails, the key stays held
  // and a retry after the lease resumes with the same email.
  try {
    if (
      !(await deps.idempotency.complete(request.scope, keyHash, keyEmailId, { statusCode: 200, body: sent }))
    )
      deps.logError?.('idempotency key was taken over before this request finished', { id: sent.id });
  } catch (error) {
    deps.logError?.('could not store the idempotent answer; a retry resumes', {
      id: sent.id,
      error: String(error),
    });
  }
  return sent;
}
