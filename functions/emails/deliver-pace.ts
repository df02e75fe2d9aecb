import { durationMs, MAX_DEFER_MS, pacedRate, slotsFor, slotTimes } from '../shared/pacing.js';

import { type DeliverDeps, type DeliverOutcome, defer, type Ready } from './deliver-deps.js';

/**
 * When each ready email may go: with `pace`, slots booked together on the shared schedule, one
 * per recipient at the account's rate; an outcome instead for each when the rate is not known yet,
 * when SES takes nothing now (a spent quota, sending paused), or when the schedule is booked
 * further ahead than the invocation can wait for it. Without `pace`, at once.
 *
 * An email needs its slot to begin while enough of the invocation is left for what follows it
 * (SES's longest answer, and the longest fetch when a file comes from its `path`); its recipients
 * after the first are booked after it (they are SES's debt, repaid at the rate), but it need not
 * wait for them: an email with topic_id sends their own messages on those slots (sendEach). When the whole batch does not fit, the first emails that do are booked (a second
 * write) and the others put back for later.
 */
export async function bookSlots(deps: DeliverDeps, ready: Ready[]): Promise<(Slot | DeliverOutcome)[]> {
  if (!deps.pace || !ready.length)
    return ready.map(() => ({ at: deps.clock.now().getTime(), strict: false }));
  const limits = await usableLimits(deps, ready);
  if (Array.isArray(limits)) return limits;
  const { sesRate, ratePerSecond } = limits;
  // Read after the limits (which may have waited for SES): the schedule is booked from now.
  const now = deps.clock.now().getTime();
  const slots = ready.map((email) => slotsFor(email.recipients));
  /** The latest each email may start (without a time limit, within SQS's longest delay). */
  const latestOf = ready.map((email) => latestStart(deps, email, now));
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
      ? slotTimes(booked.startAt, slots.slice(0, count), ratePerSecond).map((at) => ({
          at,
          strict,
          spacingMs: durationMs(1, ratePerSecond),
        }))
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

/**
 * What may still follow an email's claim: SES's longest answer (`sends` of them one after the
 * other: an email with topic_id waits for its first message, then each other checks its own time), and a
 * fetch of its files first.
 */
export const needMs = (time: NonNullable<DeliverDeps['time']>, fetching: boolean, sends = 1) =>
  (fetching ? time.fetchMs + time.marginMs : 0) + sends * time.sendMs + time.marginMs;

/** Whether a file of the email may still have to be fetched from its `path` (unless an earlier attempt kept it). */
export const fetches = (email: Ready) => (email.job.content.attachments ?? []).some((a) => a.path);

/** How late a timer may wake for a slot (a busy event loop) without the email missing it. */
const WAKE_TOLERANCE_MS = 500;

/**
 * An email's moment on the schedule. `strict`: SES's allowance for bursts (about a second of
 * sending) holds a single send at this rate, so an email that comes to its claim more than LATE_MS
 * after its slot (held by the file gate, a slow fetch) would crowd the sends booked after it: it goes
 * back for a new slot instead. At higher rates the allowance absorbs a late send.
 */
export interface Slot {
  at: number;
  strict: boolean;
  /**
   * The time between two of its recipients' slots (absent or 0 without pacing): the messages of an
   * email with topic_id after its first go one such step apart, on the slots it booked.
   */
  spacingMs?: number;
}
export const LATE_MS = 1_000;

/** Why not to start an email's claim now: too little of the invocation is left for what follows it. */
export const tooLate = (deps: DeliverDeps, fetching: boolean, sends = 1): boolean =>
  deps.time !== undefined && deps.time.left() < needMs(deps.time, fetching, sends);

/** The account's rate to book at; or, when SES takes nothing now (or its rate is unknown), each email's deferral. */
async function usableLimits(
  deps: DeliverDeps,
  ready: Ready[],
): Promise<{ sesRate: number; ratePerSecond: number } | DeliverOutcome[]> {
  const limits = await (deps.pace as NonNullable<DeliverDeps['pace']>).limits.current(
    deps.clock.now().getTime(),
  );
  if (limits.blocked === 'unknown')
    return Promise.all(
      ready.map((email) =>
        defer(
          deps,
          email.queued,
          'unknown',
          "the account's SES send rate is not known yet (GetAccount not read, or failing); it is sent once it is",
        ),
      ),
    );
  const { ratePerSecond: sesRate, blocked } = limits;
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
  return { sesRate, ratePerSecond: pacedRate(sesRate) };
}

/** The latest an email may start at (without a time limit, within SQS's longest delay). */
const latestStart = (deps: DeliverDeps, email: Ready, now: number) =>
  deps.time
    ? now + deps.time.left() - needMs(deps.time, fetches(email)) - WAKE_TOLERANCE_MS
    : now + MAX_DEFER_MS;

/**
 * Transactional first (the broadcast lane). Transactional and broadcast emails share the account's
 * rate, and so the one schedule; SQS has no priority, so broadcast emails wait in a queue of their
 * own (the lane), and its consumer books the schedule only a moment ahead: a lane booking starts no
 * later than BROADCAST_HORIZON_MS from now, and books at most that much sending at once (at least
 * one email: at 1 per second, one). A transactional batch books after whatever is booked, as ever,
 * so it finds at most one lane booking ahead of it: it waits behind broadcasts at most
 * BROADCAST_HORIZON_MS plus one booking (about 1 s; 1.6 s at 1 per second), however large the
 * broadcast. And while transactional mail books the schedule further ahead than the horizon, the
 * lane books nothing: it takes only the slots transactional mail leaves free.
 */
export const BROADCAST_HORIZON_MS = 500;
/**
 * How long the rest of a lane batch waits in its invocation for the schedule to come within the
 * horizon again (a wait costs only the invocation's time). Longer (transactional mail booked far
 * ahead), or past what the invocation has left, it goes back on the lane for later ('busy').
 */
export const LANE_WAIT_MS = 10_000;
/** A lane booking that lost a race (another consumer booked the same moment) tries again this much later, at most. */
const LANE_RETRY_MS = 50;

/**
 * How many of these emails (their slots, in order) one lane booking takes at `ratePerSecond`: as
 * many as fit in `horizonMs` of sending, at least one.
 */
export function laneChunk(slots: readonly number[], ratePerSecond: number, horizonMs: number): number {
  let count = 0;
  let before = 0;
  for (const n of slots) {
    if (count > 0 && durationMs(before + n, ratePerSecond) > horizonMs) break;
    before += n;
    count++;
  }
  return count;
}

/**
 * How long a lane batch waits before it may book again, told the schedule is booked until
 * `busyUntil`: until it is within the horizon (a moment at least, when it already is: another
 * consumer took the moment).
 */
export const laneWaitMs = (busyUntil: number, nowMs: number, horizonMs: number, random: () => number) =>
  Math.max(busyUntil - horizonMs - nowMs, 0) + Math.round(random() * LANE_RETRY_MS);

/**
 * When each email of a lane batch may go (see BROADCAST_HORIZON_MS): booked a few at a time, each
 * booking starting within the horizon, the batch waiting in its invocation between bookings. Each
 * email's slot is given as soon as it is booked (its send need not wait for the batch's other
 * bookings). What cannot be booked soon enough goes back on the lane for later ('busy').
 */
export function bookLaneSlots(deps: DeliverDeps, ready: Ready[]): Promise<Slot | DeliverOutcome>[] {
  const settle: ((value: Slot | DeliverOutcome | Error) => void)[] = [];
  const promises = ready.map(
    (_, i) =>
      new Promise<Slot | DeliverOutcome>((resolve, reject) => {
        settle[i] = (value) => (value instanceof Error ? reject(value) : resolve(value));
      }),
  );
  const give = (from: number, values: (Slot | DeliverOutcome | Error)[]) => {
    for (const [i, value] of values.entries()) settle[from + i]?.(value);
  };
  let done = 0;
  laneBookings(deps, ready, (from, values) => {
    give(from, values);
    done = from + values.length;
  }).catch((error) =>
    give(
      done,
      ready.slice(done).map(() => (error instanceof Error ? error : new Error(String(error)))),
    ),
  );
  return promises;
}

async function laneBookings(
  deps: DeliverDeps,
  ready: Ready[],
  give: (from: number, values: (Slot | DeliverOutcome)[]) => void,
): Promise<void> {
  if (!ready.length) return;
  if (!deps.pace) {
    give(
      0,
      ready.map(() => ({ at: deps.clock.now().getTime(), strict: false })),
    );
    return;
  }
  const pace = deps.pace;
  const limits = await usableLimits(deps, ready);
  if (Array.isArray(limits)) return give(0, limits);
  const { sesRate, ratePerSecond } = limits;
  const strict = sesRate < 2;
  const slots = ready.map((email) => slotsFor(email.recipients));
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = deps.random ?? Math.random;
  const waitUntil = deps.clock.now().getTime() + LANE_WAIT_MS;
  let i = 0;
  while (i < ready.length) {
    const now = deps.clock.now().getTime();
    const count = laneChunk(slots.slice(i), ratePerSecond, BROADCAST_HORIZON_MS);
    // Each email of the booking must start by its own latest (the invocation's time), and the
    // booking within the horizon.
    let latest = now + BROADCAST_HORIZON_MS;
    let before = 0;
    for (let j = i; j < i + count; j++) {
      latest = Math.min(
        latest,
        latestStart(deps, ready[j] as Ready, now) - durationMs(before, ratePerSecond),
      );
      before += slots[j] ?? 0;
    }
    let booked: { startAt: number } | { busyUntil: number };
    try {
      booked =
        latest < now
          ? { busyUntil: now + BROADCAST_HORIZON_MS }
          : await pace.pacer.reserve(durationMs(before, ratePerSecond), now, latest);
    } catch (error) {
      // As a transactional batch: nothing was claimed, so the rest simply goes back for a moment.
      deps.log?.warn('could not book the send schedule; the rest of the lane batch is put back', { error });
      booked = { busyUntil: now };
    }
    if ('startAt' in booked) {
      const times = slotTimes(booked.startAt, slots.slice(i, i + count), ratePerSecond);
      give(
        i,
        times.map((at) => ({ at, strict, spacingMs: durationMs(1, ratePerSecond) })),
      );
      i += count;
      continue;
    }
    const wait = laneWaitMs(booked.busyUntil, now, BROADCAST_HORIZON_MS, random);
    // Waits in the invocation while the schedule comes within the horizon soon enough for the
    // next email (its latest start, the batch's longest wait); else the rest goes back on the lane.
    const next = ready[i] as Ready;
    if (
      latest >= now &&
      now + wait <= Math.min(waitUntil, latestStart(deps, next, now) - BROADCAST_HORIZON_MS)
    ) {
      await sleep(wait);
      continue;
    }
    const aheadMs = Math.max(0, booked.busyUntil - now - BROADCAST_HORIZON_MS);
    give(
      i,
      await Promise.all(
        ready
          .slice(i)
          .map((email) =>
            defer(
              deps,
              email.queued,
              'busy',
              `broadcast emails wait for the slots transactional mail leaves free: the send schedule is booked ${Math.round((booked.busyUntil - now) / 1000)} s ahead at ${sesRate}/s`,
              aheadMs,
            ),
          ),
      ),
    );
    return;
  }
}
