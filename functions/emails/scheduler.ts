import { notFound, validationError } from '../shared/errors.js';
import type { Clock, Log } from '../shared/ports.js';
import { endEmail } from './end.js';
import type { DueEntry, EmailQueue, EmailRepository, EmailState } from './ports.js';
import { dueJob, loadScheduleReader, parseScheduledAt, SCHEDULE_AHEAD_MS } from './schedule.js';
import { decide, failUnknown, type SweepDeps, unknownMayBeWaiting } from './sweep.js';

/** What the scheduler needs: the sweeper's, without the dead letters, and of its settings only those of its rules. */
export type SchedulerDeps = Omit<SweepDeps, 'deadLetters' | 'settings'> & {
  settings: Pick<SweepDeps['settings'], 'requeueAfterMs' | 'backlogGraceMs' | 'unknownOutcomeAfterMs'>;
};

/**
 * Scheduled emails. One is stored like any other (status `queued`), with its time, the API key
 * that scheduled it, and an entry in the due index (table.ts). From there:
 *
 * - **The scheduler** (`dispatchScheduled`, run by the dispatch-scheduled function every minute on
 *   AWS, every second locally) reads the due index up to SCHEDULE_AHEAD_MS ahead and puts each email on the
 *   send queue with a delay that makes its message visible at its time (a reference: the consumer
 *   reads its state, its key and its content then). It marks which time it queued the email for,
 *   so the next run does not queue it again. An email stays in the index until it is sent or final,
 *   so the scheduler also watches what a lost message or an unknown outcome would strand (the
 *   sweeper's rules, `decide`): the sweeper's own scan leaves scheduled emails to it.
 * - **The consumer** sends it only when its time has come and its key still works: the claim is
 *   conditional on `scheduled_at <= now`, so the claim, a reschedule and a cancel (each a
 *   conditional write on the status item) cannot both happen: a cancel or reschedule that comes
 *   as the email falls due either wins (nothing is sent, or it is sent at the new time) or loses
 *   (400, and the email is sent once).
 * - **Reschedule** (`PATCH /v1/emails/{id}`) and **cancel** (`POST /v1/emails/{id}/cancel`) hold
 *   while the email waits: queued, never claimed, not sent. A canceled email ends `failed` with
 *   reason `canceled` (the spec's four statuses; `last_event: canceled`).
 *
 * Nothing is lost to a deploy or a failed function: the schedule is the table (with point-in-time
 * recovery), and every step is retried by the next run. Cost per scheduled email: one due-index
 * write when it is stored, one status write when it is queued, one index removal in the write that
 * sends or ends it, and two reads of its key by the consumer.
 */

export interface DispatchReport {
  /** Put on the queue for their time. */
  dispatched: number;
  /** Put on the queue again: their message was lost (the sweeper's rule). */
  requeued: number;
  /** Ended `failed`: their attempt's outcome stayed unknown (the sweeper's rule). */
  failedUnknownOutcome: number;
  /** Index entries of emails already sent or final, removed. */
  cleaned: number;
  /** Partitions left to the next run: this one's time was running out. */
  deferredPartitions: number;
}

/**
 * How long after its time (or its last queueing) a scheduled email may stay unclaimed before its
 * message is taken as lost: two scheduler runs on AWS.
 */
export const LOST_DISPATCH_AFTER_MS = 120_000;

/**
 * Entries of each due index partition read per run by each of the scheduler's two reads (dispatch
 * and watch, below): with the default 32 shards, up to 32,000 emails fall due per minute on AWS
 * (the next run goes on where this one stopped).
 */
export const MAX_DUE_PER_PARTITION = 1_000;

/**
 * How far behind its look-ahead bound the scheduler keeps each partition's frontier once it has
 * read all up to it: an email the send path (or a reschedule) left to the scheduler, due just past
 * the look-ahead by a clock a little behind the scheduler's, still lands ahead of the frontier.
 * (One that lands behind it is found by the watch, a pass later.)
 */
export const FRONTIER_MARGIN_MS = 60_000;

/** Partitions of the due index read side by side. */
const PARTITIONS_AT_ONCE = 4;

/**
 * A run starts no further partition with less than this left of its invocation (60 s): room for
 * the partitions under way to finish (two bounded reads each, and their dispatch). The partitions
 * left go first at the next run (each run starts at another one), so none waits behind the others
 * for good.
 */
export const SCHEDULER_TIME_MARGIN_MS = 15_000;

/**
 * Queues the scheduled emails that fall due within SCHEDULE_AHEAD_MS, and watches those due and
 * queued. `all`: queue every one due again, whatever was queued before (a local start, whose
 * in-memory queue lost the delayed messages of the last run).
 *
 * Each partition of the due index (its shards, and the unsharded one of earlier versions) is read
 * twice per run, each read bounded (MAX_DUE_PER_PARTITION), from cursors kept in the table:
 * - **dispatch**, from the partition's frontier (before it, every entry was queued at least once)
 *   up to SCHEDULE_AHEAD_MS ahead; the frontier then moves up to the first entry the queue refused,
 *   past a whole page, or (all read) up to FRONTIER_MARGIN_MS short of the look-ahead;
 * - **watch**, the entries behind the frontier (queued, not yet sent: a lost message, an unknown
 *   outcome), a page a run, starting over from the partition's start once it reaches the frontier.
 * So emails falling due are queued on time however many queued ones wait behind them (SES slow or
 * throttled), and each waiting one is looked at again within a pass.
 */
export async function dispatchScheduled(
  deps: SchedulerDeps,
  options: { all?: boolean; perPartition?: number; timeLeft?: () => number } = {},
): Promise<DispatchReport> {
  const cap = options.perPartition ?? MAX_DUE_PER_PARTITION;
  const report: DispatchReport = {
    dispatched: 0,
    requeued: 0,
    failedUnknownOutcome: 0,
    cleaned: 0,
    deferredPartitions: 0,
  };
  const now = deps.clock.now().getTime();
  // '~' sorts after '#' and every id character: every email due at the bound itself is in.
  const untilSk = `${new Date(now + SCHEDULE_AHEAD_MS).toISOString()}~`;
  const frontierCap = new Date(now + SCHEDULE_AHEAD_MS - FRONTIER_MARGIN_MS).toISOString();
  const progress = await deps.store.scheduleProgress();
  const partitions = deps.store.duePartitions();
  const backlog = { value: undefined as number | undefined };
  const work = async (partition: string) => {
    const cursor = progress.get(partition) ?? { frontier: '', watchFrom: '' };
    const next = { ...cursor };
    const from = options.all ? '' : cursor.frontier;
    const due = await deps.store.dueIn(partition, from, untilSk, cap);
    const refused = await handleDue(deps, due, now, report, backlog, options);
    // Up to the first entry the queue refused (queued again next run); else just past a whole page
    // ('~' sorts after every id character); else (all read) FRONTIER_MARGIN_MS short of the
    // look-ahead. An entry that failed otherwise is behind the frontier, where the watch finds it.
    const stop = due.find((entry) => refused.has(entry.id))?.sk;
    const reached = due.length >= cap ? `${due[due.length - 1]?.sk}~` : undefined;
    next.frontier = stop ?? reached ?? frontierCap;
    if (next.frontier < cursor.frontier && stop === undefined && !options.all)
      next.frontier = cursor.frontier;
    if (!options.all && cursor.frontier > '') {
      const watched = await deps.store.dueIn(partition, cursor.watchFrom, cursor.frontier, cap);
      await handleDue(deps, watched, now, report, backlog, options);
      // A whole page: the pass goes on after it; less: it reached the frontier, and starts over.
      next.watchFrom = watched.length >= cap ? `${watched[watched.length - 1]?.sk ?? ''}~` : '';
    }
    if (next.frontier !== cursor.frontier || next.watchFrom !== cursor.watchFrom)
      await deps.store.saveScheduleProgress(partition, next);
  };
  // Each run starts at another partition (one a minute on AWS), so a run cut short by its time
  // leaves different ones for the next.
  const start = Math.floor(now / 60_000) % Math.max(1, partitions.length);
  const queue = [...partitions.slice(start), ...partitions.slice(0, start)];
  const timeLeft = options.timeLeft;
  const failures: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(PARTITIONS_AT_ONCE, queue.length) }, async () => {
      for (let partition = queue.shift(); partition !== undefined; partition = queue.shift()) {
        if (timeLeft && timeLeft() < SCHEDULER_TIME_MARGIN_MS) {
          report.deferredPartitions++;
          continue;
        }
        try {
          await work(partition);
        } catch (error) {
          // One partition's trouble must not stop the others'; the next run tries it again.
          deps.log?.warn('scheduler: could not read a partition of the due index', { partition, error });
          failures.push(error);
        }
      }
    }),
  );
  // ...and the run still fails, so that the function's errors (and their alarm) show it.
  if (failures.length) throw failures[0];
  return report;
}

/**
 * Dispatches, cleans or watches these due index entries (the sweeper's rules); returns the ids the
 * queue refused (the next run queues them again). One that fails otherwise is logged and left to
 * the next look at it.
 */
async function handleDue(
  deps: SchedulerDeps,
  entries: DueEntry[],
  now: number,
  report: DispatchReport,
  backlog: { value: number | undefined },
  options: { all?: boolean },
): Promise<Set<string>> {
  const refused = new Set<string>();
  const ids = entries.map((entry) => entry.id);
  for (let i = 0; i < ids.length; i += 100) {
    const states = await deps.store.states(ids.slice(i, i + 100));
    const ready: EmailState[] = [];
    for (const state of states) {
      try {
        if (state.status !== 'queued' || state.sent_at) {
          await deps.store.unindexDue(state.id);
          report.cleaned++;
          continue;
        }
        if (!state.scheduled_at || Date.parse(state.scheduled_at) > now + SCHEDULE_AHEAD_MS) continue;
        if (state.send_started_at === undefined && (options.all || state.dispatched !== state.scheduled_at)) {
          ready.push(state);
          continue;
        }
        // A due email never tried this long after its time (or its last queueing) lost its
        // message: a send path that died between marking it queued and queueing it. Sooner than
        // the sweeper's rule for others, so it is late by minutes, not a quarter of an hour; a
        // second message for one that was only slow is harmless (the claim lets one through).
        // One SES refused is being retried by its own message: the sweeper's rule, which waits
        // for every retry, as SES may be asking to slow down.
        const requeueAfterMs =
          state.refused_at === undefined
            ? Math.min(deps.settings.requeueAfterMs, LOST_DISPATCH_AFTER_MS)
            : deps.settings.requeueAfterMs;
        const decision = decide(state, now, { ...deps.settings, requeueAfterMs });
        if (decision.action === 'requeue') {
          backlog.value ??= await deps.queue.backlog();
          // Behind a backlog its message is not lost, only late: a later run looks again.
          if (backlog.value > 0 && decision.waitedMs < requeueAfterMs + deps.settings.backlogGraceMs)
            continue;
          if (await deps.store.markRequeued(state.id, now, now - requeueAfterMs)) {
            await deps.queue.enqueue(dueJob(state, now));
            report.requeued++;
            deps.counters?.count('SweepRequeued');
          }
        } else if (decision.action === 'fail-unknown') {
          backlog.value ??= await deps.queue.backlog();
          // Its claim's release may have failed, its message waiting behind the backlog (sweep.ts).
          if (unknownMayBeWaiting(decision, backlog.value, now, deps.settings)) continue;
          if (await failUnknown(deps, state.id, decision, now)) report.failedUnknownOutcome++;
        }
      } catch (error) {
        deps.log?.warn('scheduler: could not handle an email; next run tries again', {
          email_id: state.id,
          error,
        });
      }
    }
    if (ready.length) for (const id of await dispatch(deps, ready, now, report)) refused.add(id);
  }
  return refused;
}

/** Queues these emails for their times (ten a call), then marks each as queued for that time. */
async function dispatch(
  deps: SchedulerDeps,
  ready: EmailState[],
  now: number,
  report: DispatchReport,
): Promise<Set<string>> {
  const refused = new Set(await deps.queue.enqueueMany(ready.map((state) => dueJob(state, now))));
  await Promise.all(
    ready
      .filter((state) => !refused.has(state.id))
      .map(async (state) => {
        report.dispatched++;
        deps.counters?.count('ScheduledDispatched');
        // A failed mark only means the next run queues it again: a duplicate message is harmless.
        await deps.store
          .markDispatched(state.id, state.scheduled_at ?? '', now)
          .catch((error) =>
            deps.log?.warn('scheduler: could not mark an email queued', { email_id: state.id, error }),
          );
      }),
  );
  if (refused.size)
    deps.log?.warn('scheduler: the queue refused emails; next run tries again', { refused: refused.size });
  return refused;
}

/** Whether the send path queues a scheduled email itself (it falls due before the scheduler's next look). */
export const dueSoon = (scheduledAt: string, now: number) =>
  Date.parse(scheduledAt) - now <= SCHEDULE_AHEAD_MS;

export interface ScheduleChangeDeps {
  emails: Pick<EmailRepository, 'getState' | 'reschedule' | 'finish'>;
  queue: Pick<EmailQueue, 'enqueue'>;
  clock: Clock;
  log?: Log;
}

/** PATCH /v1/emails/{id} `{scheduled_at}`: moves a scheduled email that still waits. */
export async function rescheduleEmail(
  deps: ScheduleChangeDeps,
  id: string,
  text: string,
): Promise<{ object: 'email'; id: string }> {
  await loadScheduleReader(text);
  const now = deps.clock.now();
  const at = parseScheduledAt(text, now);
  const state = await stateOf(deps, id);
  assertWaiting(state);
  const soon = dueSoon(at, now.getTime());
  if (!(await deps.emails.reschedule(id, at, soon))) assertWaiting(await stateOf(deps, id), true);
  if (soon) await queueItself(deps, { id, scheduled_at: at, key_id: state.key_id }, now.getTime());
  return { object: 'email', id };
}

/** POST /v1/emails/{id}/cancel: ends a scheduled email that still waits, for good. */
export async function cancelEmail(
  deps: Omit<ScheduleChangeDeps, 'queue'>,
  id: string,
): Promise<{ object: 'email'; id: string }> {
  const state = await stateOf(deps, id);
  if (isCanceled(state)) return { object: 'email', id }; // a repeated cancel changes nothing
  assertWaiting(state);
  const at = deps.clock.now().toISOString();
  const canceled = await endEmail(deps, id, { ending: 'canceled', at, reason: 'canceled' });
  if (!canceled) {
    const now = await stateOf(deps, id);
    if (!isCanceled(now)) assertWaiting(now, true);
  }
  return { object: 'email', id };
}

/**
 * The send path's (or a reschedule's) own queueing of an email due soon. Should the queue refuse,
 * the mark is taken back so that the scheduler's next run queues it.
 */
export async function queueItself(
  deps: { emails: Pick<EmailRepository, 'reschedule'>; queue: Pick<EmailQueue, 'enqueue'>; log?: Log },
  state: Pick<EmailState, 'id' | 'key_id' | 'scheduled_at'>,
  now: number,
): Promise<void> {
  try {
    await deps.queue.enqueue(dueJob(state, now));
  } catch (error) {
    deps.log?.error('could not queue a scheduled email; the scheduler will', { email_id: state.id, error });
    if (state.scheduled_at)
      await deps.emails
        .reschedule(state.id, state.scheduled_at, false, { unmark: true })
        .catch(() => undefined);
  }
}

async function stateOf(deps: Pick<ScheduleChangeDeps, 'emails'>, id: string): Promise<EmailState> {
  const state = await deps.emails.getState(id);
  if (!state) throw notFound(`Email ${JSON.stringify(id)} not found.`);
  return state;
}

const isCanceled = (state: EmailState) => state.status === 'failed' && state.canceled === true;

/** A 400 saying why this email can no longer be changed; nothing when it still waits (unless `lost`: it just stopped waiting). */
function assertWaiting(state: EmailState, lost = false) {
  const refuse = (why: string) => {
    throw validationError(`This email ${why}, so it can no longer be rescheduled or canceled.`);
  };
  if (!state.scheduled_at)
    throw validationError(
      'This email was not scheduled: only a scheduled email can be rescheduled or canceled.',
    );
  if (isCanceled(state)) refuse('was canceled');
  if (state.sent_at) refuse('was already sent');
  if (state.status !== 'queued') refuse(`has already ended (${state.status})`);
  if (state.send_started_at !== undefined) refuse('is already being sent');
  if (lost) refuse('is already being sent');
}
