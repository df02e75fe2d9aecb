/**
 * Transactional first (issue 41, item 4): the broadcast lane's bookings on the shared send schedule,
 * as arithmetic on a virtual clock (no timing: the schedule is the table's, kept in memory as
 * DynamoSendPacer keeps it; waiting advances the virtual clock).
 */
import { describe, expect, it } from 'vitest';
import type { DeliverDeps, DeliverOutcome, Ready } from '../../functions/emails/deliver-deps.js';
import {
  BROADCAST_HORIZON_MS,
  bookLaneSlots,
  bookSlots,
  LANE_WAIT_MS,
  laneChunk,
  laneWaitMs,
  type Slot,
} from '../../functions/emails/deliver-pace.js';
import { durationMs, pacedRate, SendingLimits } from '../../functions/shared/pacing.js';
import type { SendPacer } from '../../functions/shared/ports.js';

/** One schedule, one virtual clock, and a consumer's deps on them (lane or transactional). */
function world(rate: number) {
  let now = 1_700_000_000_000;
  let nextAt = Number.NEGATIVE_INFINITY;
  const pacer: SendPacer = {
    reserve: async (duration, nowMs, latestStartMs) => {
      const startAt = Math.max(nextAt, nowMs);
      if (startAt > latestStartMs) return { busyUntil: startAt };
      nextAt = startAt + duration;
      return { startAt };
    },
  };
  /** Timers of the virtual clock: a sleep resolves once the clock is moved past it. */
  const timers: { at: number; wake: () => void }[] = [];
  const deps = (lane?: 'broadcast'): DeliverDeps =>
    ({
      clock: { now: () => new Date(now) },
      random: () => 0,
      sleep: (ms: number) => new Promise<void>((wake) => timers.push({ at: now + ms, wake })),
      emails: { markDeferred: async () => undefined },
      pace: {
        pacer,
        limits: new SendingLimits(
          {
            read: async () => ({
              maxSendRate: rate,
              max24HourSend: -1,
              sentLast24Hours: 0,
              sendingEnabled: true,
            }),
          },
          { refreshMs: 300_000, blockedRecheckMs: 300_000 },
        ),
      },
      ...(lane ? { lane } : {}),
    }) as unknown as DeliverDeps;
  /** Lets every pending promise run, then moves the clock to the next timer and wakes it. */
  const step = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    timers.sort((a, b) => a.at - b.at);
    const next = timers.shift();
    if (!next) return false;
    now = Math.max(now, next.at);
    next.wake();
    return true;
  };
  return {
    deps,
    step,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    bookedUntil: () => nextAt,
  };
}

const email = (i: number) =>
  ({ recipients: 1, job: { content: {} }, queued: { id: `e${i}` } }) as unknown as Ready;
const emails = (n: number) => Array.from({ length: n }, (_, i) => email(i));

describe('the lane’s booking arithmetic', () => {
  it('books at most the horizon’s worth of sending at once, one email at least', () => {
    // 14/s paced at 13.86/s: 72.2 ms an email, 6 in 500 ms.
    expect(laneChunk([1, 1, 1, 1, 1, 1, 1, 1, 1, 1], pacedRate(14), BROADCAST_HORIZON_MS)).toBe(6);
    // The sandbox's 1/s: one email (1.05 s) though it passes the horizon.
    expect(laneChunk([1, 1, 1], pacedRate(1), BROADCAST_HORIZON_MS)).toBe(1);
    expect(laneChunk([], pacedRate(14), BROADCAST_HORIZON_MS)).toBe(0);
  });

  it('waits until the schedule is within the horizon again, a moment when it already is', () => {
    expect(laneWaitMs(10_000, 8_000, 500, () => 0)).toBe(1_500);
    expect(laneWaitMs(8_200, 8_000, 500, () => 0)).toBe(0);
    expect(laneWaitMs(8_200, 8_000, 500, () => 1)).toBe(50);
  });
});

describe('transactional first on the shared schedule', () => {
  async function transactionalWait(rate: number, laneBatches: number, lane: boolean) {
    const w = world(rate);
    // The lane's backlog: batches of 10 broadcast emails taken by 5 consumers at once.
    const broadcast = Array.from({ length: laneBatches }, () =>
      lane ? bookLaneSlots(w.deps('broadcast'), emails(10)) : [bookSlots(w.deps(), emails(10))],
    );
    // A moment later (the lane's first bookings made), a transactional email is booked.
    for (let i = 0; i < 3; i++) await w.step();
    w.advance(137);
    const acceptedAt = w.now();
    const [slot] = (await bookSlots(w.deps(), [email(99)])) as Slot[];
    // Let the lane run to its end.
    while (await w.step());
    const outcomes = await Promise.all(broadcast.flat());
    return { waitMs: (slot as Slot).at - acceptedAt, outcomes: outcomes.flat() as (Slot | DeliverOutcome)[] };
  }

  it('at 14/s, 50 broadcast emails in flight hold a transactional email back at most a horizon and one lane booking (under 2 s)', async () => {
    const { waitMs, outcomes } = await transactionalWait(14, 5, true);
    expect(waitMs).toBeLessThanOrEqual(BROADCAST_HORIZON_MS + BROADCAST_HORIZON_MS);
    // Every broadcast email got a slot (none put back: the wait fit in the invocation).
    expect(outcomes.every((o) => 'at' in o)).toBe(true);
    // Booked the way the transactional pacing books them, the broadcast would hold it back ~3.5 s.
    const booked = await transactionalWait(14, 5, false);
    expect(booked.waitMs).toBeGreaterThan(2_000);
  });

  it('at the sandbox’s 1/s, at most the horizon and one email (1.6 s)', async () => {
    const { waitMs } = await transactionalWait(1, 2, true);
    expect(waitMs).toBeLessThanOrEqual(BROADCAST_HORIZON_MS + durationMs(1, pacedRate(1)));
  });

  it('still sends the broadcast at the account’s pace: its slots follow each other 1/rate apart, no gap', async () => {
    const w = world(14);
    const lanes = Array.from({ length: 5 }, () => bookLaneSlots(w.deps('broadcast'), emails(10)));
    while (await w.step());
    const starts = ((await Promise.all(lanes.flat())) as Slot[]).map((s) => s.at).sort((a, b) => a - b);
    const spacing = durationMs(1, pacedRate(14));
    // 50 emails over 49 slots' time: the schedule never ran dry between the lane's bookings.
    expect((starts.at(-1) as number) - (starts[0] as number)).toBeLessThanOrEqual(49 * spacing + 1);
    for (let i = 1; i < starts.length; i++)
      expect((starts[i] as number) - (starts[i - 1] as number)).toBeGreaterThanOrEqual(spacing - 0.01);
  });

  it('gives way to transactional mail: while it books the schedule far ahead, the lane’s emails go back on the lane (busy)', async () => {
    const w = world(14);
    // 1,000 transactional emails booked at once: 72 s of sending.
    await bookSlots(w.deps(), emails(1_000));
    const lane = bookLaneSlots(w.deps('broadcast'), emails(10));
    while (await w.step());
    const outcomes = (await Promise.all(lane)) as DeliverOutcome[];
    for (const outcome of outcomes) expect(outcome).toMatchObject({ result: 'deferred', why: 'busy' });
    // Back once the transactional mail is nearly through, not before.
    const retryAt = (outcomes[0] as { retryAt: number }).retryAt;
    expect(retryAt - w.now()).toBeGreaterThan(LANE_WAIT_MS);
    expect(retryAt).toBeGreaterThanOrEqual(Math.floor(w.bookedUntil() - BROADCAST_HORIZON_MS));
  });
});
