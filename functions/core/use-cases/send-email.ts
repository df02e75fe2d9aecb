import { domainOf } from '../address.js';
import { type SendEmailInput, toContent } from '../email.js';
import { newEmailId } from '../ids.js';
import type { Clock, EmailQueue, EmailRepository } from '../ports.js';

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
export async function sendEmail(deps: SendEmailDeps, input: SendEmailInput): Promise<SentEmail> {
  await deps.assertSenderDomain(domainOf(input.from.email));
  const id = newEmailId();
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
