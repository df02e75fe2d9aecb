import { type Clock, type EmailRepository, type Mailer, MailerError, type SendJob } from '../ports.js';

export interface DeliverDeps {
  emails: EmailRepository;
  mailer: Mailer;
  clock: Clock;
  /** How long a claim keeps other workers off an email; longer than one send attempt can take. */
  leaseMs: number;
  logError?: (message: string, fields: Record<string, unknown>) => void;
}

export type DeliverOutcome =
  | { result: 'sent'; messageId: string }
  | { result: 'skipped'; why: 'done' | 'missing' }
  /** `gaveUp`: a temporary failure on the final attempt; the message should go on to the dead-letter queue. */
  | { result: 'failed'; reason: string; gaveUp: boolean }
  /** Try again later (the queue redelivers); the email stays queued. */
  | { result: 'retry'; reason: string };

/**
 * Delivers one queued email at most once, although the queue delivers messages at least once:
 * a conditional claim (a lease) comes before the provider call, and the provider's message id is
 * recorded after it. A duplicate message finds the email done (skip) or leased (retry later).
 *
 * `finalAttempt`: the queue will not redeliver after this one (it goes to the dead-letter queue),
 * so a retryable failure ends the email `failed` instead of leaving it `queued`, and the message
 * still goes to the dead-letter queue for an operator to look at.
 */
export async function deliverEmail(
  deps: DeliverDeps,
  job: SendJob,
  finalAttempt: boolean,
): Promise<DeliverOutcome> {
  const claim = await deps.emails.claim(job.id, deps.clock.now().getTime(), deps.leaseMs);
  if (claim === 'done' || claim === 'missing') return { result: 'skipped', why: claim };
  if (claim === 'busy') return { result: 'retry', reason: 'another worker holds the lease' };

  let messageId: string;
  try {
    ({ messageId } = await deps.mailer.send(job));
  } catch (error) {
    const mailerError =
      error instanceof MailerError ? error : new MailerError(String(error), true, 'UnexpectedError');
    if (mailerError.retryable && !finalAttempt) {
      await deps.emails.release(job.id);
      return { result: 'retry', reason: `${mailerError.code}: ${mailerError.message}` };
    }
    const reason = mailerError.retryable
      ? `gave up after repeated temporary failures (${mailerError.code}: ${mailerError.message})`
      : `${mailerError.code}: ${mailerError.message}`;
    await deps.emails.finish(job.id, 'failed', deps.clock.now().toISOString(), reason);
    return { result: 'failed', reason, gaveUp: mailerError.retryable };
  }

  // The provider has the email now: whatever happens next must not cause a second send.
  try {
    await deps.emails.markSent(job.id, messageId, deps.clock.now().toISOString());
  } catch (error) {
    deps.logError?.('sent, but recording the provider message id failed', {
      id: job.id,
      messageId,
      error: String(error),
    });
  }
  return { result: 'sent', messageId };
}
