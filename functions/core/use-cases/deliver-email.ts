import type { EmailContent } from '../email.js';
import {
  type Clock,
  type CounterName,
  type Counters,
  type EmailRepository,
  type EventPublisher,
  type Log,
  type Mailer,
  MailerError,
  type SendJob,
  type Suppression,
  type SuppressionRepository,
  suppressedReason,
} from '../ports.js';
import { addressKey, recipientsOf, type SuppressedReason } from '../recipients.js';
import { type EmailFacts, emailEvent, publishQuietly, tagsObject } from './publish-events.js';

export interface DeliverDeps {
  emails: EmailRepository;
  mailer: Mailer;
  /** The suppression list, read once per email (one batch read); absent: nobody is left out. */
  suppressions?: Pick<SuppressionRepository, 'find'>;
  clock: Clock;
  /** Where webhook events go (absent: none are raised). */
  events?: EventPublisher;
  log?: Log;
  counters?: Counters;
}

export type DeliverOutcome =
  | { result: 'sent'; messageId: string; suppressed?: number }
  /** Every recipient is on the suppression list: settled `bounced`, and SES never called. */
  | { result: 'suppressed'; recipients: number }
  /** Nothing to do: sent or final already, an attempt is under way or its outcome pending, or no such email. */
  | { result: 'skipped'; why: 'done' | 'in_progress' | 'missing' }
  /** Final: the provider refused it for good, or refused it on every attempt. */
  | { result: 'failed'; reason: string; gaveUp: boolean }
  /** The provider refused it for now and did not take it: try again later (the queue redelivers). */
  | { result: 'retry'; reason: string }
  /** The provider may have taken it: never tried again; its Send event or the sweeper settles it. */
  | { result: 'unknown'; reason: string };

/**
 * Hands one queued email to the provider at most once, although the queue delivers messages at
 * least once and workers die:
 *
 * 1. `claim` records, with a conditional write, that an attempt begins. The record does not expire,
 *    so no other message, retry or worker ever starts a second attempt while it stands.
 * 2. The provider's answer decides what happens to the record:
 *    - accepted: the email is marked sent (if that write fails, the provider's Send event does it);
 *    - rejected for good: the email ends `failed`;
 *    - refused for now, not taken: the record is removed and the message retried later; on the
 *      final attempt the email ends `failed` instead;
 *    - unknown (timeout, 5xx): the record stays. The provider's Send event marks the email sent if
 *      it was accepted; otherwise the sweeper ends it `failed` as "outcome unknown". Never a resend.
 *
 * `finalAttempt`: the queue will not redeliver after this one (it goes to the dead-letter queue).
 */
export async function deliverEmail(
  deps: DeliverDeps,
  job: SendJob,
  finalAttempt: boolean,
): Promise<DeliverOutcome> {
  const count = (name: CounterName) => deps.counters?.count(name);
  // Read before the claim: a failed read leaves nothing claimed, so the message is simply retried.
  const left = await suppressedIn(deps, job.content);
  const startedAt = deps.clock.now().getTime();
  if (left.all) {
    // Nobody to send to: settled in one write, never handed to SES (and never claimed, so the
    // write holds only while no attempt ever began).
    const at = deps.clock.now().toISOString();
    const settled = await deps.emails.finish(job.id, 'bounced', at, {
      reason: `every recipient is on the suppression list (${left.summary}); nothing was sent`,
      guard: { unsent: true },
      suppressed: { byReason: left.byReason, at },
    });
    if (!settled) return { result: 'skipped', why: 'done' };
    deps.counters?.count('RecipientsSuppressed', left.positions.length);
    await raiseSuppressed(deps, job, left.named, at);
    return { result: 'suppressed', recipients: left.positions.length };
  }
  const claim = await deps.emails.claim(
    job.id,
    startedAt,
    left.positions.length ? { byReason: left.byReason, at: new Date(startedAt).toISOString() } : undefined,
  );
  if (claim !== 'claimed') return { result: 'skipped', why: claim };
  if (left.positions.length) {
    deps.counters?.count('RecipientsSuppressed', left.positions.length);
    await raiseSuppressed(deps, job, left.named, new Date(startedAt).toISOString());
  }
  const toSend = left.positions.length ? { ...job, content: without(job.content, left.emails) } : job;

  let messageId: string;
  try {
    ({ messageId } = await deps.mailer.send(toSend));
  } catch (error) {
    const failure =
      error instanceof MailerError ? error : new MailerError(String(error), 'unknown', 'UnexpectedError');
    const reason = `${failure.code}: ${failure.message}`;
    if (/Throttl|TooManyRequests/.test(failure.code)) count('SesThrottled');
    switch (failure.kind) {
      case 'unknown':
        count('SendOutcomeUnknown');
        await deps.emails
          .markUnknown(job.id, reason)
          .catch((recordError) =>
            deps.log?.error('could not record the unknown outcome', { email_id: job.id, error: recordError }),
          );
        return { result: 'unknown', reason };
      case 'refused':
        if (!finalAttempt) {
          count('SendRetried');
          await deps.emails.release(job.id, startedAt, deps.clock.now().getTime());
          return { result: 'retry', reason };
        }
        break;
      case 'rejected':
        break;
    }
    const gaveUp = failure.kind === 'refused';
    count(gaveUp ? 'EmailsFailedGaveUp' : 'EmailsFailedRejected');
    const finalReason = gaveUp ? `gave up after repeated temporary refusals (${reason})` : reason;
    const failedAt = deps.clock.now().toISOString();
    if (await deps.emails.finish(job.id, 'failed', failedAt, { reason: finalReason }))
      await publishQuietly(deps, 'email.failed', () => [
        emailEvent('email.failed', failedAt, factsOf(job), sentTo(toSend), {
          failed: { reason: finalReason },
        }),
      ]);
    return { result: 'failed', reason: finalReason, gaveUp };
  }

  // The provider has the email now: whatever happens next must not cause a second send.
  count('EmailsSent');
  try {
    const sentAt = deps.clock.now().toISOString();
    // email.sent is raised once, by whichever records the send first: this, or SES's Send event.
    if (await deps.emails.markSent(job.id, messageId, sentAt))
      await publishQuietly(deps, 'email.sent', () => [
        emailEvent('email.sent', sentAt, { ...factsOf(job), message_id: messageId }, sentTo(toSend)),
      ]);
  } catch (error) {
    deps.log?.error('sent, but recording it failed; the Send event will', {
      email_id: job.id,
      messageId,
      error,
    });
  }
  return {
    result: 'sent',
    messageId,
    ...(left.positions.length ? { suppressed: left.positions.length } : {}),
  };
}

/** Which of the email's recipients are on the suppression list, and why (one batch read). */
async function suppressedIn(deps: DeliverDeps, content: EmailContent) {
  const recipients = recipientsOf(content);
  const found: Map<string, Suppression> = deps.suppressions
    ? await deps.suppressions.find(recipients.map((r) => r.email))
    : new Map();
  const positions: number[] = [];
  const byReason: Partial<Record<SuppressedReason, number[]>> = {};
  const named = new Map<SuppressedReason, string[]>();
  recipients.forEach((r, i) => {
    const entry = found.get(r.email);
    if (!entry) return;
    positions.push(i);
    const reason = suppressedReason(entry.origin);
    byReason[reason] = [...(byReason[reason] ?? []), i];
    const list = named.get(reason) ?? [];
    if (!list.includes(r.email)) list.push(r.email);
    named.set(reason, list);
  });
  const summary = [...named].map(([reason, emails]) => `${reason}: ${emails.join(', ')}`).join('; ');
  return {
    positions,
    named,
    emails: new Set(found.keys()),
    byReason,
    summary: summary.length > 120 ? `${summary.slice(0, 117)}...` : summary,
    all: recipients.length > 0 && positions.length === recipients.length,
  };
}

/** The addressed content without these (suppressed) addresses. */
const without = (content: EmailContent, emails: Set<string>): EmailContent => ({
  ...content,
  to: content.to.filter((a) => !emails.has(addressKey(a))),
  cc: content.cc.filter((a) => !emails.has(addressKey(a))),
  bcc: content.bcc.filter((a) => !emails.has(addressKey(a))),
});

/** What an email event says about this email. */
const factsOf = (job: SendJob): EmailFacts => ({
  email_id: job.id,
  from: job.content.from,
  subject: job.content.subject,
  tags: tagsObject(job.content.tags),
});

/** The bare addresses a send went to. */
const sentTo = (job: SendJob) => recipientsOf(job.content).map((r) => r.email);

const SUPPRESSED_MESSAGES: Record<SuppressedReason, string> = {
  previous_bounce: 'The address is on the suppression list: an earlier email to it bounced permanently.',
  previous_complaint:
    'The address is on the suppression list: its recipient marked an earlier email as spam.',
  manual: 'The address is on the suppression list: it was added by hand.',
};

/** email.suppressed, one event per reason, naming the recipients left out for it. */
async function raiseSuppressed(
  deps: DeliverDeps,
  job: SendJob,
  named: Map<SuppressedReason, string[]>,
  at: string,
) {
  await publishQuietly(deps, 'email.suppressed', () =>
    [...named].map(([reason, emails]) =>
      emailEvent('email.suppressed', at, factsOf(job), emails, {
        suppressed: { type: 'Suppressed', reason, message: SUPPRESSED_MESSAGES[reason] },
      }),
    ),
  );
}
