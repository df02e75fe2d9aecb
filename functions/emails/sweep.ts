import type { MetricsCounter } from '../metrics/ports.js';
import { emailIdAt, FIRST_EMAIL_ID } from '../shared/ids.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import type { EmailContent } from './email.js';
import { type EndDeps, endEmail } from './end.js';
import type {
  DeadLetters,
  EmailQueue,
  EmailRepository,
  EmailState,
  SweepProgress,
  SweepStore,
} from './ports.js';
import { dueJob } from './schedule.js';
import { settleUnreported } from './status.js';

/**
 * The sweeper: nothing accepted is ever left `queued` for good. It runs on a schedule (every minute
 * on AWS, every second locally) and
 * 1. ends `failed` every email whose send message reached the dead-letter queue without any
 *    attempt having begun (the consumer could not even claim it: the table was failing);
 * 2. puts back on the queue each email that is queued, not sent, with no attempt under way, not
 *    scheduled for later, and older than `requeueAfterMs` (its message was lost: the send function
 *    died between storing and queueing it, or a local restart emptied the in-memory queue);
 * 3. ends `failed` each email whose attempt began but whose outcome stayed unknown (no Send event)
 *    for `unknownOutcomeAfterMs`: SES may or may not have it, and it is never sent again blindly;
 * 4. settles each sent email some of whose recipients SES reported no final event for (delivery or
 *    bounce) within `finalEventsAfterMs` of sending, from what is known (status.ts,
 *    settleUnreported): `bounced` if one is known not to have it, `delivered` if some got it and
 *    none is known not to, `failed` if nothing is known; the reason names the silent ones.
 *
 * Cost: it reads the index of queued emails (every shard, merged oldest first) from where it
 * stopped, a page (`maxPerRun`) at a time: while a page comes back full (more is waiting) and the
 * invocation has more than SWEEP_MARGIN_MS left, it reads the next, so a run's pass grows with the
 * backlog and the sweeper never falls behind for good (without the invocation's time, as in tests
 * and the local runtime's every-second runs, one page a run). It moves past emails still open (an attempt under way, a deferral) and
 * starts the pass again from the oldest of them once it reaches the newest, so everything before
 * the older of the two marks is known to be sent or final, and a crowd of open emails never holds
 * up the look at those after them. A run that finds nothing stranded is one Query per shard (plus
 * reading its progress item).
 * Every change it makes is a conditional write, so it may race the consumer, a retry or another
 * run of itself without sending anything twice.
 */
export interface SweepSettings {
  /**
   * How long an unsent email waits, since it was accepted, last refused or last re-queued, before
   * it is taken as stranded: longer than its message can be retried (maxReceiveCount × visibility
   * timeout).
   */
  requeueAfterMs: number;
  /**
   * How much longer a stranded email may wait while the send queue has a backlog (its message may
   * be waiting in it) before it is re-queued anyway; a duplicate message is harmless, only wasteful.
   */
  backlogGraceMs: number;
  /** How long an attempt may stay unconfirmed before its email ends `failed` (longer than a Send event can take). */
  unknownOutcomeAfterMs: number;
  /** How long after sending SES may still report a final event (its maximum delivery time, and a margin). */
  finalEventsAfterMs: number;
  /** How often the emails waiting longest for final events are looked at. */
  oldCheckEveryMs: number;
  /** Most emails looked at per run, in each scan. */
  maxPerRun: number;
  /** Most old queued emails read per hourly check (they are paged through). */
  maxOldPerCheck: number;
  /** Most dead-letter messages read per run. */
  maxDeadLettersPerRun: number;
  /** The send queue's maxReceiveCount, for the failure reason of a dead-lettered email. */
  maxAttempts: number;
}

export interface SweepDeps {
  /** (releaseStanding: a dead-lettered message's claim left standing is released before it ends; absent, it is not.) */
  emails: Pick<EmailRepository, 'finish'> & Partial<Pick<EmailRepository, 'releaseStanding'>>;
  /** Where email.failed goes for the emails the sweeper fails (absent: nowhere). */
  events?: EventPublisher;
  store: SweepStore;
  queue: EmailQueue;
  deadLetters: DeadLetters;
  /**
   * The broadcast lane (emails/broadcast-lane.ts): a stranded broadcast email (its content has a
   * `broadcast_id`) goes back there, never on the send queue ahead of transactional mail, waiting
   * while the lane has a backlog; and the lane's dead-letter queue is read as the send queue's is.
   * Absent: every email goes back on the send queue.
   */
  lane?: { queue: EmailQueue; deadLetters: DeadLetters };
  clock: Clock;
  settings: SweepSettings;
  log?: Log;
  counters?: Counters;
  /** Where the email metrics are counted (absent: nothing is; metrics/model.ts). */
  metrics?: MetricsCounter;
  /**
   * The invocation's time left (ms): the scan reads further pages while it is above
   * SWEEP_MARGIN_MS. Absent: one page a run.
   */
  timeLeftMs?: () => number;
}

/**
 * The time a run keeps when it stops taking pages (its function's timeout is 60 s): a page of 500
 * whose every email needs re-queueing (a conditional write, a read of its content and a message
 * each) takes about 10 s, and the progress is saved after the scan (and before it too, when the scan
 * read more than a page).
 */
export const SWEEP_MARGIN_MS = 25_000;

export interface SweepReport {
  /** Queued emails looked at (both scans). */
  examined: number;
  requeued: number;
  /** Stranded, but left for the next run because the queue has a backlog it may be waiting in. */
  deferred: number;
  failedFromDeadLetters: number;
  failedUnknownOutcome: number;
  failedNoFinalEvent: number;
}

export type SweepAction =
  | { action: 'none'; resolved: boolean }
  /** `waitedMs`: since it was accepted, last refused or last re-queued. */
  | { action: 'requeue'; waitedMs: number }
  | { action: 'fail-unknown'; attemptStartedAt: number; reason: string };

const minutes = (ms: number) =>
  `${Math.round(ms / 60_000)} minute${Math.round(ms / 60_000) === 1 ? '' : 's'}`;
const age = (ms: number) =>
  ms >= 2 * 3_600_000
    ? `${Math.round(ms / 3_600_000)} hours`
    : ms >= 60_000
      ? minutes(ms)
      : `${Math.round(ms / 1000)} seconds`;

/**
 * What the sweeper does with one queued email it found older than `requeueAfterMs`. `resolved`:
 * nothing about it can strand any more (it is sent or final), so later runs need not look again.
 */
export function decide(
  state: EmailState,
  nowMs: number,
  settings: Pick<SweepSettings, 'requeueAfterMs' | 'unknownOutcomeAfterMs'>,
): SweepAction {
  if (state.status !== 'queued' || state.sent_at) return { action: 'none', resolved: true };
  // Not due yet: the scheduler watches it (the due index holds it until it is sent or final).
  if (state.scheduled_at && Date.parse(state.scheduled_at) > nowMs) return { action: 'none', resolved: true };
  if (state.send_started_at !== undefined) {
    if (nowMs - state.send_started_at < settings.unknownOutcomeAfterMs)
      return { action: 'none', resolved: false };
    return {
      action: 'fail-unknown',
      attemptStartedAt: state.send_started_at,
      reason:
        `outcome unknown: the attempt to hand it to SES got no answer${state.attempt_error ? ` (${state.attempt_error})` : ''} ` +
        `and SES reported no Send event within ${age(settings.unknownOutcomeAfterMs)}; ` +
        'it was not sent again, so that it cannot arrive twice',
    };
  }
  const waitingSince = Math.max(
    Date.parse(state.created_at),
    state.refused_at ?? 0,
    state.requeued_at ?? 0,
    state.scheduled_at ? Date.parse(state.scheduled_at) : 0,
  );
  const waitedMs = nowMs - waitingSince;
  if (waitedMs < settings.requeueAfterMs) return { action: 'none', resolved: false };
  return { action: 'requeue', waitedMs };
}

/**
 * A claim standing this long may be one SES answered without taking the email whose release
 * failed: the message that puts the email back carries the claim and releases it on its next
 * receive (deliver.ts), and behind a backlog it may wait past `unknownOutcomeAfterMs`. So while
 * the queue has a backlog, an unknown outcome is ended only once it has waited the backlog's grace
 * beyond: an attempt whose outcome is truly unknown ends a little later, and one that SES refused
 * is never ended as one whose outcome is unknown while its message may still come.
 */
export const unknownMayBeWaiting = (
  decision: { attemptStartedAt: number },
  backlog: number,
  nowMs: number,
  settings: Pick<SweepSettings, 'unknownOutcomeAfterMs' | 'backlogGraceMs'>,
) =>
  backlog > 0 && nowMs - decision.attemptStartedAt < settings.unknownOutcomeAfterMs + settings.backlogGraceMs;

export async function sweep(
  deps: SweepDeps,
  /**
   * A local start, when the in-memory queue is known to be empty: `requeueAfterMs: 0` puts every
   * unsent email back at once; `fromStart` scans all queued emails and leaves the progress as it is.
   */
  override: { requeueAfterMs?: number; fromStart?: boolean } = {},
): Promise<SweepReport> {
  const report: SweepReport = {
    examined: 0,
    requeued: 0,
    deferred: 0,
    failedFromDeadLetters: 0,
    failedUnknownOutcome: 0,
    failedNoFinalEvent: 0,
  };
  const now = deps.clock.now().getTime();
  await failDeadLetters(deps, report);
  if (override.fromStart) {
    const requeueAfterMs = override.requeueAfterMs ?? deps.settings.requeueAfterMs;
    let at: Pick<SweepProgress, 'fromId' | 'unresolvedFromId'> = { fromId: FIRST_EMAIL_ID };
    // Page by page to the newest (the pass ends when it comes back to where it started over).
    for (;;) {
      const before = report.examined;
      at = await scanUnsent(deps, report, { fromId: at.fromId }, now, requeueAfterMs);
      if (report.examined - before < deps.settings.maxPerRun) break;
    }
    return report;
  }
  const progress = await deps.store.progress();
  const next = { ...progress };
  const timeLeft = deps.timeLeftMs;
  let scanned: Pick<SweepProgress, 'fromId' | 'unresolvedFromId'> = progress;
  for (;;) {
    const before = report.examined;
    scanned = await scanUnsent(deps, report, scanned, now, deps.settings.requeueAfterMs);
    // A full page: more is waiting. Read on while the invocation has time for another page.
    if (report.examined - before < deps.settings.maxPerRun) break;
    if (!timeLeft || timeLeft() < SWEEP_MARGIN_MS) {
      deps.log?.warn('sweep: more queued emails than this run had time for; the next goes on', {
        examined: report.examined,
      });
      break;
    }
  }
  next.fromId = scanned.fromId;
  if (scanned.unresolvedFromId) next.unresolvedFromId = scanned.unresolvedFromId;
  else delete next.unresolvedFromId;
  // A scan that read on past its first page used much of the invocation: its progress is saved
  // before the old emails' pass, so a timeout in that pass does not lose it.
  let saved = progress;
  if (report.examined > deps.settings.maxPerRun && changed(next, saved)) {
    if (await deps.store.saveProgress(next, saved)) saved = { ...next };
    else return report;
  }
  // A pass through the old emails goes on at every run until it has read them all, then waits.
  const midPass = progress.oldFromId !== FIRST_EMAIL_ID;
  if (midPass || now - progress.oldCheckedAtMs >= deps.settings.oldCheckEveryMs) {
    next.oldFromId = await settleOld(deps, report, progress.oldFromId, now);
    if (next.oldFromId === FIRST_EMAIL_ID) next.oldCheckedAtMs = now;
  }
  if (changed(next, saved)) await deps.store.saveProgress(next, saved);
  return report;
}

const changed = (next: SweepProgress, read: SweepProgress) =>
  next.fromId !== read.fromId ||
  next.unresolvedFromId !== read.unresolvedFromId ||
  next.oldCheckedAtMs !== read.oldCheckedAtMs ||
  next.oldFromId !== read.oldFromId;

async function failDeadLetters(deps: SweepDeps, report: SweepReport) {
  await failDeadLettersOf(deps, deps.deadLetters, report);
  if (deps.lane) await failDeadLettersOf(deps, deps.lane.deadLetters, report);
}

async function failDeadLettersOf(deps: SweepDeps, deadLetters: DeadLetters, report: SweepReport) {
  const { settings, clock } = deps;
  for (let read = 0; read < settings.maxDeadLettersPerRun; ) {
    const messages = await deadLetters.receive(Math.min(10, settings.maxDeadLettersPerRun - read));
    if (messages.length === 0) return;
    read += messages.length;
    for (const { job, messageId } of messages) {
      if (!job) {
        deps.log?.warn('unreadable message in the dead-letter queue', { messageId });
        continue;
      }
      // Its message carried a claim SES answered without taking the email, which nobody could
      // release since (the table failing throughout): released now, so the email ends for what
      // happened to it (its message failed every time), not as an unknown outcome 30 minutes on.
      if (job.unreleased)
        await deps.emails
          .releaseStanding?.(job.id, job.unreleased, clock.now().getTime())
          .catch((error) =>
            deps.log?.warn('sweep: could not release a claim left standing', { email_id: job.id, error }),
          );
      const failed = await endEmail(deps, job.id, {
        ending: 'deadLettered',
        at: clock.now().toISOString(),
        reason: failedReason(settings.maxAttempts),
        email: async () => job.content ?? (await deps.store.content(job.id)),
      });
      if (failed) report.failedFromDeadLetters++;
    }
  }
}

/**
 * Looks at a page of queued emails (at most `maxPerRun`) from where the scan stands, up to those
 * `requeueAfterMs` old; returns where the next page starts. The scan moves past emails still open
 * (an attempt under way, a deferral, a re-queue), remembering the oldest of them; once it reaches
 * the newest, it starts over from that one. So a crowd of open emails (SES throttling) never holds
 * up the look at the ones after them, and each open one is looked at again within a pass.
 */
async function scanUnsent(
  deps: SweepDeps,
  report: SweepReport,
  at: Pick<SweepProgress, 'fromId' | 'unresolvedFromId'>,
  now: number,
  requeueAfterMs: number,
): Promise<Pick<SweepProgress, 'fromId' | 'unresolvedFromId'>> {
  const { store, settings } = deps;
  const boundary = emailIdAt(now - requeueAfterMs);
  const ids = await store.queuedIds(at.fromId, boundary, settings.maxPerRun);
  report.examined += ids.length;
  let firstUnresolved: string | undefined;
  if (ids.length > 0) {
    const states = new Map((await store.states(ids)).map((state) => [state.id, state]));
    // Each queue's backlog, read once a page when needed (the lane's, for broadcast emails).
    const backlogs = new Map<EmailQueue, Promise<number>>();
    const backlogOf = (queue: EmailQueue) => {
      const known = backlogs.get(queue) ?? queue.backlog();
      backlogs.set(queue, known);
      return known;
    };
    for (const id of ids) {
      const state = states.get(id);
      const decision: SweepAction = state
        ? decide(state, now, { ...settings, requeueAfterMs })
        : { action: 'none', resolved: true };
      let resolved = decision.action === 'none' && decision.resolved;
      try {
        if (decision.action === 'requeue' && state) {
          // Its queue: a broadcast email's is the lane (its content says; read once, and used to
          // re-queue it); a scheduled email is never a broadcast's.
          const route = await routeOf(deps, state);
          // A message waiting behind a backlog is not lost: come back when the queue has caught up,
          // or once it has waited long past any backlog worth waiting for.
          const backlog = await backlogOf(route.queue);
          if (backlog > 0 && decision.waitedMs < requeueAfterMs + settings.backlogGraceMs) {
            report.deferred++;
            deps.counters?.count('SweepDeferred');
          } else if (await requeue(deps, state, now, requeueAfterMs, route)) {
            report.requeued++;
            deps.counters?.count('SweepRequeued');
          }
        } else if (decision.action === 'fail-unknown') {
          // Its message (carrying a claim left standing) may wait in either queue.
          const backlog = (await backlogOf(deps.queue)) + (deps.lane ? await backlogOf(deps.lane.queue) : 0);
          if (unknownMayBeWaiting(decision, backlog, now, settings)) {
            report.deferred++;
            deps.counters?.count('SweepDeferred');
          } else {
            resolved = await failUnknown(deps, id, decision, now);
            if (resolved) report.failedUnknownOutcome++;
          }
        }
      } catch (error) {
        // One email's trouble (a throttled write, the queue down) must not stop the others'.
        deps.log?.warn('sweep: could not handle an email; next run tries again', { email_id: id, error });
        resolved = false;
      }
      if (!resolved) firstUnresolved ??= id;
    }
  }
  const oldest = [at.unresolvedFromId, firstUnresolved]
    .filter((id): id is string => id !== undefined && id !== FIRST_EMAIL_ID)
    .sort()[0];
  if (ids.length >= settings.maxPerRun) {
    // More to read: the pass goes on after this page. Ids have one length, so this sorts after the
    // last one and before any later id.
    return { fromId: `${ids[ids.length - 1]}0`, ...(oldest ? { unresolvedFromId: oldest } : {}) };
  }
  // The pass reached the newest: the next starts from the oldest email still open. Nothing open
  // and nothing read: the start stays where it is (a quiet minute writes nothing, and an email
  // stored meanwhile under an older id, by a resumed request, is still ahead of it).
  if (oldest) return { fromId: oldest };
  return { fromId: ids.length === 0 ? at.fromId : boundary };
}

/**
 * Where a stranded email goes back: a scheduled one (or any, without a lane) on the send queue, its
 * content not read here; else its content is read, and one with `broadcast_id` goes on the lane.
 */
async function routeOf(
  deps: SweepDeps,
  state: EmailState,
): Promise<{ queue: EmailQueue; content?: EmailContent | null }> {
  if (state.scheduled_at || !deps.lane) return { queue: deps.queue };
  const content = await deps.store.content(state.id);
  return { queue: content?.broadcast_id && deps.lane ? deps.lane.queue : deps.queue, content };
}

async function requeue(
  deps: SweepDeps,
  state: EmailState,
  now: number,
  requeueAfterMs: number,
  route: { queue: EmailQueue; content?: EmailContent | null },
): Promise<boolean> {
  const { id } = state;
  if (!(await deps.store.markRequeued(id, now, now - requeueAfterMs))) return false;
  // A scheduled email goes as the scheduler queues it: a reference, its key checked when sent.
  if (state.scheduled_at) {
    await route.queue.enqueue(dueJob(state, now));
    deps.log?.warn('requeued a stranded email', { email_id: id });
    return true;
  }
  const content = route.content === undefined ? await deps.store.content(id) : route.content;
  if (!content) return false;
  // Marked: its first message may still be queued (a backlog), so the consumer checks the email's
  // state before booking a send slot for this one.
  await route.queue.enqueue({ id, content, requeued: true });
  deps.log?.warn('requeued a stranded email', { email_id: id });
  return true;
}

/**
 * Sent emails still waiting for a final event long after SES stopped trying: settled from what is
 * known. Paged through from `from`, at most `maxOldPerCheck` a run; returns where the next run goes
 * on, or FIRST_EMAIL_ID once the pass has read every old queued email. Emails that are not its
 * business (unsent ones, scheduled ones waiting for their time, up to 30 days) are read and passed
 * over, so however many of them there are, the pass moves on and every sent one is reached.
 */
async function settleOld(deps: SweepDeps, report: SweepReport, from: string, now: number): Promise<string> {
  const { store, settings } = deps;
  const boundary = emailIdAt(now - settings.finalEventsAfterMs);
  let cursor = from;
  for (let read = 0; read < settings.maxOldPerCheck; ) {
    const ids = await store.queuedIds(
      cursor,
      boundary,
      Math.min(settings.maxPerRun, settings.maxOldPerCheck - read),
    );
    if (ids.length === 0) return FIRST_EMAIL_ID;
    read += ids.length;
    report.examined += ids.length;
    await settlePage(deps, report, ids, now);
    // Ids have one length, so this sorts after the last one and before any later id.
    cursor = `${ids[ids.length - 1]}0`;
  }
  return cursor;
}

async function settlePage(deps: SweepDeps, report: SweepReport, ids: string[], now: number) {
  const { settings } = deps;
  for (const state of await deps.store.states(ids)) {
    if (state.status !== 'queued' || !state.sent_at) continue;
    if (now - Date.parse(state.sent_at) < settings.finalEventsAfterMs) continue;
    // From what is known of its recipients (nothing, for an email stored before they were counted).
    const { status, reason } = settleUnreported(
      state.tally ?? { total: 0, done: 0, lost: 0 },
      age(settings.finalEventsAfterMs),
    );
    const settled = await endEmail(deps, state.id, {
      ending: 'noFinalEvent',
      status,
      at: new Date(now).toISOString(),
      reason,
      email: () => deps.store.content(state.id),
    });
    if (settled) report.failedNoFinalEvent++;
  }
}

const failedReason = (maxAttempts: number) =>
  `could not be handed to SES: its send message failed ${maxAttempts} times and went to the dead-letter queue`;

/**
 * Ends `failed` an email whose attempt got no answer and which SES never reported sent (the
 * sweeper's rule, which the scheduler applies to scheduled emails too): only while that attempt is
 * the one on record, so a racing Send event or another run changes nothing twice.
 */
export const failUnknown = (
  deps: EndDeps & { store: Pick<SweepStore, 'content'> },
  id: string,
  decision: { reason: string; attemptStartedAt: number },
  now: number,
): Promise<boolean> =>
  endEmail(deps, id, {
    ending: 'unknownOutcome',
    at: new Date(now).toISOString(),
    reason: decision.reason,
    email: () => deps.store.content(id),
    write: { attemptStartedAt: decision.attemptStartedAt },
  });
