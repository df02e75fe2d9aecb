import { randomBytes } from 'node:crypto';
import type { SenderOptions } from '../domains/model.js';
import { countMetrics, one } from '../metrics/count.js';
import { domainOf, parseAddress } from '../shared/address.js';
import type { CounterName } from '../shared/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import { endIfCanceled } from './deliver-cancel.js';
import { type BatchItem, type DeliverDeps, type DeliverOutcome, defer, type Ready } from './deliver-deps.js';
import { heavy, loadFiles, loadMime, type Problem, withBodies } from './deliver-files.js';
import { gated, sendEach, type Unsent, unsubscribeUrls } from './deliver-gate.js';
import { bookLaneSlots, bookSlots, fetches, LATE_MS, needMs, type Slot, tooLate } from './deliver-pace.js';
import { suppressedEvents, suppressedIn, without } from './deliver-suppressed.js';
import { recordUnsent } from './deliver-unsent.js';
import { endEmail } from './end.js';
import { emailEvent, emailFacts, sourceOf } from './events.js';
import { MailerError, type OutgoingFile, type QueuedJob, type SendJob, type StandingClaim } from './ports.js';
import { recipientsOf } from './recipients.js';
import { talliedOf, tallyCounts } from './tally.js';

export {
  type BatchItem,
  DEFAULT_DEFER_TIMINGS,
  type DeliverDeps,
  type DeliverOutcome,
} from './deliver-deps.js';

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
 *    - never reached (no connection could be made: the provider got none of the request): the
 *      same, but the retry is a new message delayed a few seconds (`resend`), not the old one
 *      left in flight for the visibility timeout;
 *    - the account's limits (throttled, quota spent, sending paused): the record is removed and the
 *      email deferred, which is not an attempt;
 *    - unknown (timeout, 5xx): the record stays. The provider's Send event marks the email sent if
 *      it was accepted; otherwise the sweeper ends it `failed` as "outcome unknown". Never a resend.
 *
 * `finalAttempt`: the queue will not redeliver after this one (it goes to the dead-letter queue).
 */
export async function deliverEmail(
  deps: DeliverDeps,
  queued: QueuedJob,
  finalAttempt: boolean,
): Promise<DeliverOutcome> {
  const [outcome] = await deliverBatch(deps, [{ job: queued, finalAttempt }]);
  if (outcome instanceof Error) throw outcome;
  return outcome as DeliverOutcome;
}

/**
 * A batch of queued emails, as the consumer receives them: each read and checked first (nothing
 * claimed yet), then, with `pace`, one booking on the shared schedule for all their recipients
 * (one write), and each email sent at its own slot within it, at most once (deliverEmail above).
 * Outcomes in the batch's order; an Error for an email whose reads or claim failed (the table),
 * and for every email when the booking failed: nothing of theirs was claimed, so they are retried.
 */
export async function deliverBatch(
  deps: DeliverDeps,
  items: BatchItem[],
): Promise<(DeliverOutcome | Error)[]> {
  const failure = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
  const prepared = await Promise.all(
    items.map((item) => prepare(deps, item.job, item.finalAttempt).catch(failure)),
  );
  const ready = prepared.filter((p): p is Ready => !(p instanceof Error) && 'ready' in p);
  // The lane's emails are booked a few at a time, each sent as soon as its own booking is made.
  const booked =
    deps.lane === 'broadcast'
      ? bookLaneSlots(deps, ready)
      : ((all) => ready.map((_, i) => all.then((times) => times[i] as Slot | DeliverOutcome | Error)))(
          bookSlots(deps, ready).catch((error) => ready.map(() => failure(error))),
        );
  const outcomes = new Map<Ready, DeliverOutcome | Error>();
  await Promise.all(
    ready.map(async (email, i) => {
      const start = await (booked[i] as Promise<Slot | DeliverOutcome | Error>).catch(failure);
      outcomes.set(email, 'at' in start ? await sendAt(deps, email, start).catch(failure) : start);
    }),
  );
  return prepared.map((p) =>
    !(p instanceof Error) && 'ready' in p ? (outcomes.get(p) as DeliverOutcome | Error) : p,
  );
}

/**
 * Everything read before the claim: a failed read leaves nothing claimed, so the message is simply
 * retried. A large job came as a reference: its content is read back. An outcome when the email is
 * done with here (not due, missing, every recipient suppressed, its content gone).
 */
async function prepare(
  deps: DeliverDeps,
  queued: QueuedJob,
  finalAttempt: boolean,
): Promise<Ready | DeliverOutcome> {
  // A claim SES answered without taking the email, which its worker could not release: released
  // now, before the email books a slot (or waits: the sweeper would take a claim standing 30
  // minutes for an unknown outcome). A failure here fails the message, which keeps the claim.
  if (queued.unreleased)
    await deps.emails.releaseStanding(queued.id, queued.unreleased, deps.clock.now().getTime());
  if (queued.key_id !== undefined) {
    const held = await scheduledCheck(deps, queued, queued.key_id);
    if (held) return held;
  } else if (queued.requeued) {
    // The sweeper's copy, maybe of a message still queued behind a backlog: once that one was
    // sent (or is being sent), this one takes no slot of the send schedule from the emails after it.
    const state = await deps.emails.getState(queued.id);
    if (!state) return { result: 'skipped', why: 'missing' };
    if (state.status !== 'queued' || state.sent_at) return { result: 'skipped', why: 'done' };
    if (state.send_started_at !== undefined) return { result: 'skipped', why: 'in_progress' };
  }
  const stored = await withBodies(deps, queued);
  if (!stored) return { result: 'skipped', why: 'missing' };
  if ('problem' in stored) return failUnsent(deps, queued, stored.problem, finalAttempt);
  const job: SendJob = stored;
  // An email of a canceled broadcast takes no slot (asked again before its claim).
  const canceled = await endIfCanceled(deps, job);
  if (canceled) return canceled;
  // An email with topic_id: its recipients' choices for the topic too, read now (deliver-gate.ts).
  const left = await gated(deps, job.content, await suppressedIn(deps, job.content));
  if (left.all) {
    // Nobody to send to: settled in one write, never handed to SES (and never claimed, so the
    // write holds only while no attempt ever began).
    const at = deps.clock.now().toISOString();
    const settled = await endEmail(deps, job.id, {
      ending: 'allSuppressed',
      at,
      reason: job.content.topic_id
        ? `every recipient was left out, by the suppression list or their choice for the topic (${left.summary}); nothing was sent`
        : job.content.broadcast_id
          ? `every recipient was left out, by the suppression list or their unsubscribing (${left.summary}); nothing was sent`
          : `every recipient is on the suppression list (${left.summary}); nothing was sent`,
      email: job.content,
      count: left.positions.length,
      webhookEvents: (facts) => suppressedEvents(facts, left.named, at),
      write: { suppressed: { byReason: left.byReason, at } },
    });
    if (!settled) return { result: 'skipped', why: 'done' };
    return { result: 'suppressed', recipients: left.positions.length };
  }
  const recipients = recipientsOf(job.content).length - left.positions.length;
  return { ready: true, queued, job, left, finalAttempt, recipients };
}

const TOO_LATE =
  "too little of the consumer's time was left to hand it to SES before its timeout; it goes in the next";
const MISSED_SLOT = 'it came to its claim too long after its slot at SES’s rate; it takes a new one';

/** The sending options of the sender's domain (none without the lookup, or for an unreadable address). */
async function senderOf(deps: DeliverDeps, from: string): Promise<SenderOptions | undefined> {
  if (!deps.senderOptions) return undefined;
  const parsed = parseAddress(from);
  return 'error' in parsed ? undefined : deps.senderOptions(domainOf(parsed.email));
}

/** Waits for the email's slot, then claims and sends it (with its files, one such email at a time). */
async function sendAt(deps: DeliverDeps, email: Ready, slot: Slot): Promise<DeliverOutcome> {
  const startAt = slot.at;
  const wait = startAt - deps.clock.now().getTime();
  if (wait > 0) await (deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))))(wait);
  const { job, queued, finalAttempt } = email;
  const late = () => slot.strict && deps.clock.now().getTime() - startAt > LATE_MS;
  // An email with topic_id to several recipients: its first message, then the others in turn
  // (each checks the time left itself, deliver-gate.ts sendEach).
  const sends = job.content.topic_id && email.recipients > 1 ? 2 : 1;
  // An SMTP email: its message read, then sent as it is (raw), inside the gate, as files are.
  if (job.content.mime)
    return heavy(async () => {
      // As with files: time for the read (up to 40 MB from the content store), then for SES.
      if (tooLate(deps, true)) return defer(deps, queued, 'time', TOO_LATE);
      const raw = await loadMime(deps, job);
      if (!(raw instanceof Uint8Array)) return failUnsent(deps, job, raw, finalAttempt);
      if (tooLate(deps, false)) return defer(deps, queued, 'time', TOO_LATE);
      if (late()) return defer(deps, queued, 'busy', MISSED_SLOT);
      return send(deps, { ...email, spacingMs: slot.spacingMs }, [], raw);
    });
  if (!job.content.attachments?.length) {
    if (tooLate(deps, false, sends)) return defer(deps, queued, 'time', TOO_LATE);
    if (late()) return defer(deps, queued, 'busy', MISSED_SLOT);
    return send(deps, { ...email, spacingMs: slot.spacingMs }, []);
  }
  // Files loaded, then sent, inside the gate: one such email's bytes in memory at a time.
  return heavy(async () => {
    if (tooLate(deps, fetches(email))) return defer(deps, queued, 'time', TOO_LATE);
    const files = await loadFiles(deps, job);
    if (!Array.isArray(files)) return failUnsent(deps, job, files, finalAttempt);
    if (tooLate(deps, false, sends)) return defer(deps, queued, 'time', TOO_LATE);
    if (late()) return defer(deps, queued, 'busy', MISSED_SLOT);
    return send(deps, { ...email, spacingMs: slot.spacingMs }, files);
  });
}

/** Claims the email, then hands it to the provider (steps 1 and 2 above). */
async function send(
  deps: DeliverDeps,
  email: Ready & { spacingMs?: number },
  files: OutgoingFile[],
  raw?: Uint8Array,
): Promise<DeliverOutcome> {
  const { job, left, finalAttempt, queued } = email;
  const count = (name: CounterName) => deps.counters?.count(name);
  // Read before the claim: a failure to read them leaves the email unclaimed for the next attempt.
  const sender = await senderOf(deps, job.content.from);
  const toSend = {
    ...(left.positions.length ? { ...job, content: without(job.content, left.emails) } : job),
    ...(files.length ? { files } : {}),
    ...(raw ? { raw } : {}),
    ...(sender ? { sender } : {}),
  };
  // An email with topic_id: each recipient's own unsubscribe link, also read before the claim.
  const urls = await unsubscribeUrls(deps, toSend);
  const canceled = await endIfCanceled(deps, job);
  if (canceled) return canceled;
  const startedAt = deps.clock.now().getTime();
  const mark = randomBytes(9).toString('base64url');
  const claim = await deps.emails.claim(
    job.id,
    startedAt,
    left.positions.length ? { byReason: left.byReason, at: new Date(startedAt).toISOString() } : undefined,
    { mark },
  );
  if (claim === 'not_due') return notDue(deps, job.id);
  if (claim !== 'claimed' && claim !== 'claimed_suppressed') return { result: 'skipped', why: claim };
  // Only the claim that first records the recipients left out counts and raises them: a claim
  // released after a throttle is followed by another that finds them recorded.
  if (claim === 'claimed_suppressed') {
    await countMetrics(deps, job.content.from, { suppressed: 1 }, job.id, job.content.broadcast_id);
    deps.counters?.count('RecipientsSuppressed', left.positions.length);
    const at = new Date(startedAt).toISOString();
    await publishQuietly(deps, 'email.suppressed', () =>
      suppressedEvents(emailFacts(job.id, sourceOf(job.content)), left.named, at),
    );
  }

  let messageId: string;
  let unsent: Unsent[] = [];
  try {
    if (urls) {
      // One message per recipient: the first decides as one send does; the others go once each.
      const each = await sendEach(deps.mailer, toSend, urls, {
        spacingMs: email.spacingMs ?? 0,
        startAt: deps.clock.now().getTime(),
        now: () => deps.clock.now().getTime(),
        sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
        fits: (ms) => !deps.time || deps.time.left() - ms >= needMs(deps.time, false),
      });
      messageId = each.messageId;
      unsent = each.unsent;
    } else ({ messageId } = await deps.mailer.send(toSend));
  } catch (error) {
    const failure =
      error instanceof MailerError ? error : new MailerError(String(error), 'unknown', 'UnexpectedError');
    const reason = `${failure.code}: ${failure.message}`;
    switch (failure.kind) {
      case 'unknown':
        count('SendOutcomeUnknown');
        await deps.emails
          .markUnknown(job.id, reason)
          .catch((recordError) =>
            deps.log?.error('could not record the unknown outcome', { email_id: job.id, error: recordError }),
          );
        return { result: 'unknown', reason };
      case 'rate':
      case 'quota':
      case 'paused':
        // SES did not take it, and this was no attempt: the email waits for SES, however long.
        if (failure.kind === 'rate') count('SesThrottled');
        else deps.pace?.limits.refused(failure.kind, deps.clock.now().getTime());
        return defer(deps, queued, failure.kind, reason, 0, await release(deps, job.id, startedAt, mark));
      case 'refused':
      case 'unreached':
        if (!finalAttempt) {
          count('SendRetried');
          const unreleased = await release(deps, job.id, startedAt, mark);
          // A claim left standing goes with a new message, the only one that may release it.
          const resend = failure.kind === 'unreached' || unreleased !== undefined;
          return {
            result: 'retry',
            reason,
            ...(resend ? { resend } : {}),
            ...(unreleased ? { unreleased } : {}),
          };
        }
        break;
      case 'rejected':
        break;
    }
    const gaveUp = failure.kind === 'refused' || failure.kind === 'unreached';
    const finalReason = gaveUp ? `gave up after repeated temporary refusals (${reason})` : reason;
    await endEmail(deps, job.id, {
      ending: gaveUp ? 'gaveUp' : 'rejected',
      at: deps.clock.now().toISOString(),
      reason: finalReason,
      email: job.content,
      recipients: sentTo(toSend),
    });
    return { result: 'failed', reason: finalReason, gaveUp };
  }

  // The provider has the email now: whatever happens next must not cause a second send.
  count('EmailsSent');
  deps.pace?.limits.sent(email.recipients);
  try {
    const sentAt = deps.clock.now().toISOString();
    // email.sent is raised once, by whichever records the send first: this, or SES's Send event.
    const news = await deps.emails.recordSent(job.id, messageId, sentAt);
    const sent = { sent: one(news.first) };
    await countMetrics(deps, job.content.from, sent, job.id, job.content.broadcast_id);
    await tallyCounts(deps, talliedOf(job.id, job.content), sentAt, sent);
    if (news.first)
      await publishQuietly(deps, 'email.sent', () => [
        emailEvent(
          'email.sent',
          sentAt,
          emailFacts(job.id, sourceOf(job.content), messageId),
          sentTo(toSend),
        ),
      ]);
    // Each recipient SES did not take, an outcome of its own (after the send it follows).
    if (unsent.length) await recordUnsent(deps, job.id, unsent, { at: sentAt, providerMessageId: messageId });
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

/**
 * A scheduled email, before anything else: is it due, and does the key that scheduled it still
 * work? (The claim checks the time again, in the same write that starts the attempt.) An outcome
 * when it must not be sent now; undefined when it may go on.
 */
async function scheduledCheck(
  deps: DeliverDeps,
  queued: QueuedJob,
  keyId: string,
): Promise<DeliverOutcome | undefined> {
  const state = await deps.emails.getState(queued.id);
  if (!state) return { result: 'skipped', why: 'missing' };
  if (state.status !== 'queued' || state.sent_at) return { result: 'skipped', why: 'done' };
  if (state.send_started_at !== undefined) return { result: 'skipped', why: 'in_progress' };
  if (state.scheduled_at && Date.parse(state.scheduled_at) > deps.clock.now().getTime())
    return { result: 'not_due', dueAt: state.scheduled_at };
  if (!deps.apiKeys) return undefined;
  const key = await deps.apiKeys.getById(keyId);
  // Revoked: gone from the lookup first (what refuses its requests), then from the listing.
  if (key && (await deps.apiKeys.findByHash(key.hash))) return undefined;
  return failUnsent(
    deps,
    queued,
    {
      reason: `the API key that scheduled it (${keyId}) was revoked before it was due; it was not sent`,
      temporary: false,
    },
    true,
  );
}

/**
 * Undoes the claim after SES answered without taking the email. Should that write fail (three
 * times, a moment apart; the SDK retries each), the claim is left standing and returned: the message that puts the email back
 * carries it, and its next receive releases it before anything else (prepare). So a failed release
 * never leaves an email for the sweeper to end as an unknown outcome, and no claim whose call may
 * have reached SES is ever released that way: only this one, named by its time and its own mark.
 */
async function release(
  deps: DeliverDeps,
  id: string,
  startedAt: number,
  mark: string,
): Promise<StandingClaim | undefined> {
  for (let tries = 1; ; tries++) {
    try {
      await deps.emails.release(id, startedAt, deps.clock.now().getTime());
      return undefined;
    } catch (error) {
      // Three tries (each retried by the SDK too), a moment apart: a throttled table often
      // takes the write a quarter of a second later.
      if (tries < 3) {
        await (deps.sleep ?? ((ms: number) => new Promise((done) => setTimeout(done, ms))))(250 * tries);
        continue;
      }
      deps.log?.warn(
        'could not release the claim SES answered without taking the email; its message carries it',
        {
          email_id: id,
          error,
        },
      );
      return { started_at: startedAt, mark };
    }
  }
}

/** The claim found the email not yet due (moved later since its message was queued). */
async function notDue(deps: DeliverDeps, id: string): Promise<DeliverOutcome> {
  const state = await deps.emails.getState(id);
  return state?.scheduled_at
    ? { result: 'not_due', dueAt: state.scheduled_at }
    : { result: 'skipped', why: 'in_progress' };
}

/**
 * An email that cannot be sent before any attempt began: retried while the problem may pass (the
 * queue redelivers), else (or on the final attempt) it ends `failed` with the reason.
 */
async function failUnsent(
  deps: DeliverDeps,
  job: QueuedJob,
  problem: Problem,
  finalAttempt: boolean,
): Promise<DeliverOutcome> {
  if (problem.temporary && !finalAttempt) return { result: 'retry', reason: problem.reason };
  const reason = problem.temporary ? `gave up: ${problem.reason}` : problem.reason;
  const failed = await endEmail(deps, job.id, {
    ending: problem.temporary ? 'unsendableGaveUp' : 'unsendable',
    at: deps.clock.now().toISOString(),
    reason,
    email: job.content ?? (() => deps.emails.getContent(job.id)),
  });
  if (!failed) return { result: 'skipped', why: 'done' };
  return { result: 'failed', reason, gaveUp: problem.temporary };
}

/** The bare addresses a send went to. */
const sentTo = (job: SendJob) => recipientsOf(job.content).map((r) => r.email);
