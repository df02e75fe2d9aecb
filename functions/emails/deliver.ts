import type { ApiKeyRepository } from '../api-keys/ports.js';
import type { SenderOptions } from '../domains/model.js';
import { countMetrics, one } from '../metrics/count.js';
import type { MetricsCounter } from '../metrics/ports.js';
import { domainOf, parseAddress } from '../shared/address.js';
import {
  type DeferReason,
  type DeferTimings,
  deferDelayMs,
  durationMs,
  MAX_DEFER_MS,
  pacedRate,
  type SendingLimits,
  slotsFor,
  slotTimes,
} from '../shared/pacing.js';
import {
  type Clock,
  type ContentStore,
  type CounterName,
  type Counters,
  FetchError,
  type FileFetcher,
  type Log,
  type SendPacer,
} from '../shared/ports.js';
import { type Suppression, type SuppressionRepository, suppressedReason } from '../suppressions/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import { attachmentKey, encodedBytes, MAX_MESSAGE_BYTES, messageBytes } from './attachments.js';
import type { EmailContent } from './email.js';
import { endEmail } from './end.js';
import { type EmailFacts, emailEvent, emailFacts, sourceOf } from './events.js';
import {
  type EmailRepository,
  type Mailer,
  MailerError,
  type OutgoingFile,
  type QueuedJob,
  type SendJob,
} from './ports.js';
import { addressKey, recipientsOf, type SuppressedReason } from './recipients.js';

export interface DeliverDeps {
  emails: EmailRepository;
  /** The API keys, for a scheduled email: it is sent only while the key that scheduled it works. */
  apiKeys?: Pick<ApiKeyRepository, 'getById' | 'findByHash'>;
  mailer: Mailer;
  /**
   * How SES sends from the email's domain (its tracking, its own configuration set), by sender
   * domain; absent: tracking off, the stack's configuration set.
   */
  senderOptions?: (domain: string) => Promise<SenderOptions>;
  /** The suppression list, read once per email (one batch read); absent: nobody is left out. */
  suppressions?: Pick<SuppressionRepository, 'find'>;
  clock: Clock;
  /** Where webhook events go (absent: none are raised). */
  events?: EventPublisher;
  /** Where attachments and large bodies are kept (absent: an email with any of them fails). */
  content?: ContentStore;
  /** Fetches attachments given by URL (absent: such an email fails). */
  fetcher?: FileFetcher;
  /**
   * Sending at the account's pace (absent: every email goes at once): the schedule all consumers
   * share, and the account's limits as this instance knows them.
   */
  pace?: { pacer: SendPacer; limits: SendingLimits };
  /**
   * What is left of the invocation (ms), and what a claim must leave room for: the longest SES call
   * (connection and answer) and the longest fetch of a file, with a margin for the writes around
   * them. Before each claim (and each fetch) the consumer checks the time left against them, so the
   * function's timeout never cuts an attempt between its claim and SES's answer.
   */
  time?: { left: () => number; sendMs: number; fetchMs: number; marginMs: number };
  /** How long deferred emails wait (absent: the AWS defaults). */
  deferTimings?: DeferTimings;
  random?: () => number;
  /** Waits until an email's slot (absent: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  log?: Log;
  counters?: Counters;
  /** Where the email metrics are counted (absent: nothing is; metrics/model.ts). */
  metrics?: MetricsCounter;
}

export type DeliverOutcome =
  | { result: 'sent'; messageId: string; suppressed?: number }
  /** Every recipient is on the suppression list: settled `bounced`, and SES never called. */
  | { result: 'suppressed'; recipients: number }
  /** Nothing to do: sent or final already, an attempt is under way or its outcome pending, or no such email. */
  | { result: 'skipped'; why: 'done' | 'in_progress' | 'missing' }
  /** A scheduled email whose time has not come (moved later, or the message came early): not sent now. */
  | { result: 'not_due'; dueAt: string }
  /** Final: the provider refused it for good, or refused it on every attempt. */
  | { result: 'failed'; reason: string; gaveUp: boolean }
  /** The provider refused it for now and did not take it: try again later (the queue redelivers). */
  | { result: 'retry'; reason: string }
  /**
   * Not sent now, and not an attempt: SES's limits (a throttle, a spent quota, sending paused), the
   * shared schedule booked further ahead than this invocation can wait, or too little of its time
   * left. It goes back on the queue as a new message, visible again at `retryAt` (ms).
   */
  | { result: 'deferred'; why: DeferReason; reason: string; retryAt: number }
  /** The provider may have taken it: never tried again; its Send event or the sweeper settles it. */
  | { result: 'unknown'; reason: string };

/** The AWS defaults of how long deferred emails wait (send-timings.ts derives the stack's). */
export const DEFAULT_DEFER_TIMINGS: DeferTimings = {
  throttleBackoffMs: 1_000,
  throttleBackoffMaxMs: 300_000,
  blockedRetryMinMs: 300_000,
  blockedRetryMaxMs: 900_000,
};

/** One email of a batch: its message's job, and whether the queue will not redeliver after this attempt. */
export interface BatchItem {
  job: QueuedJob;
  finalAttempt: boolean;
}

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
  const startTimes = await bookSlots(deps, ready).catch((error) => ready.map(() => failure(error)));
  const outcomes = new Map<Ready, DeliverOutcome | Error>();
  await Promise.all(
    ready.map(async (email, i) => {
      const start = startTimes[i] as Slot | DeliverOutcome | Error;
      outcomes.set(email, 'at' in start ? await sendAt(deps, email, start).catch(failure) : start);
    }),
  );
  return prepared.map((p) =>
    !(p instanceof Error) && 'ready' in p ? (outcomes.get(p) as DeliverOutcome | Error) : p,
  );
}

/** An email read and checked, ready to be claimed and sent. */
interface Ready {
  ready: true;
  queued: QueuedJob;
  job: SendJob;
  left: Awaited<ReturnType<typeof suppressedIn>>;
  finalAttempt: boolean;
  /** Recipients SES will count (those not suppressed). */
  recipients: number;
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
  if (queued.key_id !== undefined) {
    const held = await scheduledCheck(deps, queued, queued.key_id);
    if (held) return held;
  }
  const stored = await withBodies(deps, queued);
  if (!stored) return { result: 'skipped', why: 'missing' };
  if ('problem' in stored) return failUnsent(deps, queued, stored.problem, finalAttempt);
  const job: SendJob = stored;
  const left = await suppressedIn(deps, job.content);
  if (left.all) {
    // Nobody to send to: settled in one write, never handed to SES (and never claimed, so the
    // write holds only while no attempt ever began).
    const at = deps.clock.now().toISOString();
    const settled = await endEmail(deps, job.id, {
      ending: 'allSuppressed',
      at,
      reason: `every recipient is on the suppression list (${left.summary}); nothing was sent`,
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

/**
 * When each ready email may go: with `pace`, slots booked together on the shared schedule, one
 * per recipient at the account's rate; an outcome instead for each when SES takes nothing now (a
 * spent quota, sending paused) or the schedule is booked further ahead than the invocation can
 * wait for it. Without `pace`, at once.
 *
 * An email needs its slot to begin while enough of the invocation is left for what follows it
 * (SES's longest answer, and the longest fetch when a file comes from its `path`); its recipients
 * after the first are booked after it (they are SES's debt, repaid at the rate), but it need not
 * wait for them. When the whole batch does not fit, the first emails that do are booked (a second
 * write) and the others put back for later.
 */
async function bookSlots(deps: DeliverDeps, ready: Ready[]): Promise<(Slot | DeliverOutcome)[]> {
  if (!deps.pace || !ready.length)
    return ready.map(() => ({ at: deps.clock.now().getTime(), strict: false }));
  const { ratePerSecond: sesRate, blocked } = await deps.pace.limits.current(deps.clock.now().getTime());
  // Read after the limits (which may have waited for SES): the schedule is booked from now.
  const now = deps.clock.now().getTime();
  const ratePerSecond = pacedRate(sesRate);
  if (blocked)
    return Promise.all(
      ready.map((email) =>
        defer(
          deps,
          email.queued,
          blocked,
          blocked === 'quota'
            ? "the account's 24-hour SES quota is spent; it is sent once SES takes emails again"
            : 'SES sending is paused for the account; it is sent once SES takes emails again',
        ),
      ),
    );
  const slots = ready.map((email) => slotsFor(email.recipients));
  /** The latest each email may start (without a time limit, within SQS's longest delay). */
  const latestOf = ready.map((email) =>
    deps.time
      ? now + deps.time.left() - needMs(deps.time, fetches(email)) - WAKE_TOLERANCE_MS
      : now + MAX_DEFER_MS,
  );
  /** When the schedule starting at `from` books the first `count` emails: each starts by its latest. */
  const fits = (from: number, count: number) => {
    let before = 0;
    for (let i = 0; i < count; i++) {
      if (from + durationMs(before, ratePerSecond) > (latestOf[i] as number)) return false;
      before += slots[i] ?? 0;
    }
    return true;
  };
  /** Books the first `count` emails: the schedule's start must leave each its own latest start. */
  const book = (count: number) => {
    let latest = Number.POSITIVE_INFINITY;
    let before = 0;
    for (let i = 0; i < count; i++) {
      latest = Math.min(latest, (latestOf[i] as number) - durationMs(before, ratePerSecond));
      before += slots[i] ?? 0;
    }
    return (deps.pace as NonNullable<DeliverDeps['pace']>).pacer.reserve(
      durationMs(before, ratePerSecond),
      now,
      latest,
    );
  };
  let booked: { startAt: number } | { busyUntil: number };
  let count = ready.length;
  try {
    booked = await book(count);
    if ('busyUntil' in booked) {
      // The first emails that would still fit after what is booked, if any.
      const from = Math.max(now, booked.busyUntil);
      for (count = 0; count < ready.length && fits(from, count + 1); ) count++;
      if (count > 0) booked = await book(count);
    }
  } catch (error) {
    // The schedule could not be read or written (the table): nothing was claimed, so the batch is
    // simply put back for a moment, as for a full schedule, rather than counted as an attempt.
    deps.log?.warn('could not book the send schedule; the batch is put back', { error });
    booked = { busyUntil: now };
    count = 0;
  }
  // Below 2 a second SES's allowance for bursts holds a single send: a late one would crowd the next.
  const strict = sesRate < 2;
  const startTimes: (Slot | DeliverOutcome)[] =
    'startAt' in booked
      ? slotTimes(booked.startAt, slots.slice(0, count), ratePerSecond).map((at) => ({ at, strict }))
      : [];
  // The rest come back once the schedule is free again: after what is booked (this batch's too).
  const busyUntil =
    'busyUntil' in booked
      ? booked.busyUntil
      : booked.startAt +
        durationMs(
          slots.slice(0, count).reduce((sum, n) => sum + n, 0),
          ratePerSecond,
        );
  const rest = await Promise.all(
    ready
      .slice(startTimes.length)
      .map((email) =>
        defer(
          deps,
          email.queued,
          'busy',
          `the send schedule is booked ${Math.round((Math.max(busyUntil, now) - now) / 1000)} s ahead at ${sesRate}/s`,
          Math.max(0, busyUntil - now),
        ),
      ),
  );
  return [...startTimes, ...rest];
}

/** What may still follow an email's claim: SES's longest answer, and a fetch of its files first. */
const needMs = (time: NonNullable<DeliverDeps['time']>, fetching: boolean) =>
  (fetching ? time.fetchMs + time.marginMs : 0) + time.sendMs + time.marginMs;

/** Whether a file of the email may still have to be fetched from its `path` (unless an earlier attempt kept it). */
const fetches = (email: Ready) => (email.job.content.attachments ?? []).some((a) => a.path);

/** How late a timer may wake for a slot (a busy event loop) without the email missing it. */
const WAKE_TOLERANCE_MS = 500;

/**
 * An email's moment on the schedule. `strict`: SES's allowance for bursts (about a second of
 * sending) holds a single send at this rate, so an email that comes to its claim more than LATE_MS
 * after its slot (held by the file gate, a slow fetch) would crowd the sends booked after it: it goes
 * back for a new slot instead. At higher rates the allowance absorbs a late send.
 */
interface Slot {
  at: number;
  strict: boolean;
}
const LATE_MS = 1_000;

/**
 * An email put back for later: not claimed (or its claim released), not an attempt. Recorded on
 * the email (best effort), so the sweeper does not take it for stranded however long it waits. A
 * throttle backs off further each time SES throttles the same email; the other reasons wait for
 * what they wait for (the schedule's room, the quota), jittered.
 */
async function defer(
  deps: DeliverDeps,
  queued: QueuedJob,
  why: DeferReason,
  reason: string,
  busyForMs = 0,
): Promise<DeliverOutcome> {
  const now = deps.clock.now().getTime();
  deps.counters?.count('SendDeferred');
  if (why === 'quota' || why === 'paused') deps.counters?.count('SesSendingBlocked');
  // A throttle released its claim, which records the refusal already.
  if (why !== 'rate')
    await deps.emails
      .markDeferred(queued.id, now)
      .catch((error) => deps.log?.warn('could not record a deferral', { email_id: queued.id, error }));
  const delayMs = deferDelayMs(
    why,
    queued.throttles ?? 0,
    deps.deferTimings ?? DEFAULT_DEFER_TIMINGS,
    deps.random,
    busyForMs,
  );
  // A time, not a delay: its message is put back once the batch is done, maybe seconds later.
  return { result: 'deferred', why, reason, retryAt: now + delayMs };
}

/** Why not to start an email's claim now: too little of the invocation is left for what follows it. */
const tooLate = (deps: DeliverDeps, fetching: boolean): boolean =>
  deps.time !== undefined && deps.time.left() < needMs(deps.time, fetching);

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
  if (!job.content.attachments?.length) {
    if (tooLate(deps, false)) return defer(deps, queued, 'time', TOO_LATE);
    if (late()) return defer(deps, queued, 'busy', MISSED_SLOT);
    return send(deps, email, []);
  }
  // Files loaded, then sent, inside the gate: one such email's bytes in memory at a time.
  return heavy(async () => {
    if (tooLate(deps, fetches(email))) return defer(deps, queued, 'time', TOO_LATE);
    const files = await loadFiles(deps, job);
    if (!Array.isArray(files)) return failUnsent(deps, job, files, finalAttempt);
    if (tooLate(deps, false)) return defer(deps, queued, 'time', TOO_LATE);
    if (late()) return defer(deps, queued, 'busy', MISSED_SLOT);
    return send(deps, email, files);
  });
}

/** Claims the email, then hands it to the provider (steps 1 and 2 above). */
async function send(deps: DeliverDeps, email: Ready, files: OutgoingFile[]): Promise<DeliverOutcome> {
  const { job, left, finalAttempt, queued } = email;
  const count = (name: CounterName) => deps.counters?.count(name);
  // Read before the claim: a failure to read them leaves the email unclaimed for the next attempt.
  const sender = await senderOf(deps, job.content.from);
  const startedAt = deps.clock.now().getTime();
  const claim = await deps.emails.claim(
    job.id,
    startedAt,
    left.positions.length ? { byReason: left.byReason, at: new Date(startedAt).toISOString() } : undefined,
  );
  if (claim === 'not_due') return notDue(deps, job.id);
  if (claim !== 'claimed' && claim !== 'claimed_suppressed') return { result: 'skipped', why: claim };
  // Only the claim that first records the recipients left out counts and raises them: a claim
  // released after a throttle is followed by another that finds them recorded.
  if (claim === 'claimed_suppressed') {
    await countMetrics(deps, job.content.from, { suppressed: 1 }, job.id);
    deps.counters?.count('RecipientsSuppressed', left.positions.length);
    const at = new Date(startedAt).toISOString();
    await publishQuietly(deps, 'email.suppressed', () =>
      suppressedEvents(emailFacts(job.id, sourceOf(job.content)), left.named, at),
    );
  }
  const toSend = {
    ...(left.positions.length ? { ...job, content: without(job.content, left.emails) } : job),
    ...(files.length ? { files } : {}),
    ...(sender ? { sender } : {}),
  };

  let messageId: string;
  try {
    ({ messageId } = await deps.mailer.send(toSend));
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
        await deps.emails.release(job.id, startedAt, deps.clock.now().getTime());
        return defer(deps, queued, failure.kind, reason);
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
    await countMetrics(deps, job.content.from, { sent: one(news.first) }, job.id);
    if (news.first)
      await publishQuietly(deps, 'email.sent', () => [
        emailEvent(
          'email.sent',
          sentAt,
          emailFacts(job.id, sourceOf(job.content), messageId),
          sentTo(toSend),
        ),
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

/** The claim found the email not yet due (moved later since its message was queued). */
async function notDue(deps: DeliverDeps, id: string): Promise<DeliverOutcome> {
  const state = await deps.emails.getState(id);
  return state?.scheduled_at
    ? { result: 'not_due', dueAt: state.scheduled_at }
    : { result: 'skipped', why: 'in_progress' };
}

/** Why an email cannot be sent as it stands; `temporary`: it may be sendable later. */
interface Problem {
  reason: string;
  temporary: boolean;
}

/**
 * The job with its bodies: its content read back when the message carried only a reference, its
 * bodies from the content store when they are kept there. Null when the email does not exist.
 */
async function withBodies(
  deps: DeliverDeps,
  queued: QueuedJob,
): Promise<SendJob | { problem: Problem } | null> {
  const content = queued.content ?? (await deps.emails.getContent(queued.id));
  if (!content) return null;
  if (!content.body_key) return { id: queued.id, content };
  const bytes = deps.content ? await deps.content.get(content.body_key) : null;
  if (!bytes)
    return { problem: { reason: "the email's bodies are missing from the content store", temporary: false } };
  const bodies = JSON.parse(Buffer.from(bytes).toString('utf8')) as Pick<EmailContent, 'html' | 'text'>;
  const { body_key: _, ...rest } = content;
  return { id: queued.id, content: { ...rest, html: bodies.html ?? null, text: bodies.text ?? null } };
}

/**
 * The email's files, in order: from the content store, or fetched from their URL (then kept in the
 * store, so a retry or a download finds them) within what is left of SES's 40 MB.
 */
async function loadFiles(deps: DeliverDeps, job: SendJob): Promise<OutgoingFile[] | Problem> {
  const attachments = job.content.attachments ?? [];
  const files: OutgoingFile[] = [];
  let total = messageBytes(job.content, []);
  for (const [index, attachment] of attachments.entries()) {
    const name = `attachment ${index} (${attachment.filename})`;
    if (!deps.content) return { reason: `${name}: no content store is configured`, temporary: false };
    const key = attachmentKey(job.id, attachment.id);
    let bytes = await deps.content.get(key);
    if (!bytes && attachment.path) {
      if (!deps.fetcher) return { reason: `${name}: fetching files is not configured`, temporary: false };
      // What the rest of the message leaves, in raw bytes (base64 takes 4 for 3).
      const budget = Math.max(0, Math.floor(((MAX_MESSAGE_BYTES - total) * 3) / 4));
      try {
        bytes = await deps.fetcher.fetch(attachment.path, budget);
      } catch (error) {
        const fetchError = error instanceof FetchError ? error : new FetchError(String(error), true);
        return {
          reason: `${name} could not be fetched from its path: ${fetchError.message}`,
          temporary: fetchError.temporary,
        };
      }
      await deps.content.put(key, bytes, attachment.content_type);
    }
    if (!bytes) return { reason: `${name} is missing from the content store`, temporary: false };
    total += encodedBytes(bytes.length) + 300;
    if (total > MAX_MESSAGE_BYTES)
      return {
        reason: `the message would be over SES's limit of ${MAX_MESSAGE_BYTES} bytes once encoded (at ${name})`,
        temporary: false,
      };
    files.push({
      filename: attachment.filename,
      content_type: attachment.content_type,
      disposition: attachment.content_disposition,
      content_id: attachment.content_id,
      bytes,
    });
  }
  return files;
}

/**
 * Emails with attachments are prepared and sent one at a time per container: one holds up to 40 MB
 * of files and, while SES is called, their base64 in the request (about 150 MB in all), so a batch
 * of them side by side could exhaust the function's memory.
 */
let heavyChain: Promise<unknown> = Promise.resolve();
function heavy<T>(work: () => Promise<T>): Promise<T> {
  const run = heavyChain.then(work, work);
  heavyChain = run.catch(() => undefined);
  return run;
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

/** The bare addresses a send went to. */
const sentTo = (job: SendJob) => recipientsOf(job.content).map((r) => r.email);

const SUPPRESSED_MESSAGES: Record<SuppressedReason, string> = {
  previous_bounce: 'The address is on the suppression list: an earlier email to it bounced permanently.',
  previous_complaint:
    'The address is on the suppression list: its recipient marked an earlier email as spam.',
  manual: 'The address is on the suppression list: it was added by hand.',
};

/** email.suppressed, one event per reason, naming the recipients left out for it. */
const suppressedEvents = (facts: EmailFacts, named: Map<SuppressedReason, string[]>, at: string) =>
  [...named].map(([reason, emails]) =>
    emailEvent('email.suppressed', at, facts, emails, {
      suppressed: { type: 'Suppressed', reason, message: SUPPRESSED_MESSAGES[reason] },
    }),
  );
