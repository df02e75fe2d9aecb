import { describe, expect, it, vi } from 'vitest';
import type { DeliverDeps, Ready } from '../../functions/emails/deliver-deps.js';
import { bookSlots, type Slot } from '../../functions/emails/deliver-pace.js';
import {
  blockedBy,
  type DeferTimings,
  deferDelayMs,
  durationMs,
  MAX_DEFER_MS,
  pacedRate,
  SendingLimits,
  type SendQuota,
  slotsFor,
  slotTimes,
} from '../../functions/shared/pacing.js';
import type { SendPacer } from '../../functions/shared/ports.js';

const timings: DeferTimings = {
  throttleBackoffMs: 1_000,
  throttleBackoffMaxMs: 300_000,
  blockedRetryMinMs: 300_000,
  blockedRetryMaxMs: 900_000,
};
const quota = (over: Partial<SendQuota> = {}): SendQuota => ({
  maxSendRate: 14,
  max24HourSend: 50_000,
  sentLast24Hours: 0,
  sendingEnabled: true,
  ...over,
});

describe('pacing arithmetic', () => {
  it('counts recipients as SES does: an email to 3 takes 3 slots, spaced 1/rate apart', () => {
    expect(slotsFor(3)).toBe(3);
    expect(slotsFor(0)).toBe(1);
    expect(durationMs(14, 14)).toBe(1000);
    expect(durationMs(3, 1)).toBe(3000);
    // Emails of 1, 3 and 2 recipients at 2 per second: 0 s, 0.5 s, 2 s (after the 4 slots before it).
    expect(slotTimes(10_000, [1, 3, 2], 2)).toEqual([10_000, 10_500, 12_000]);
  });

  it('backs a throttled email off exponentially, jittered between half and all of each step, up to its maximum', () => {
    const delays = (throttles: number) =>
      [0, 0.25, 0.5, 0.75, 0.999].map((r) => deferDelayMs('rate', throttles, timings, () => r));
    expect(delays(0)).toEqual([500, 625, 750, 875, 1000]);
    expect(delays(1)).toEqual([1000, 1250, 1500, 1750, 1999]);
    expect(delays(3)).toEqual([4000, 5000, 6000, 7000, 7996]);
    // Capped: never more than the maximum, whatever the count.
    for (const d of [...delays(20), ...delays(200)]) {
      expect(d).toBeGreaterThanOrEqual(150_000);
      expect(d).toBeLessThanOrEqual(300_000);
    }
  });

  it('spreads a wave of throttled emails: 1,000 deferred at once come back over the whole step, not together', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const delays = Array.from({ length: 1000 }, () => deferDelayMs('rate', 2, timings, random));
    const seconds = new Map<number, number>();
    for (const d of delays) seconds.set(Math.floor(d / 100), (seconds.get(Math.floor(d / 100)) ?? 0) + 1);
    // Between 2 and 4 s, in 20 buckets of 100 ms: no bucket holds more than a tenth of them.
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2000);
    expect(Math.max(...delays)).toBeLessThan(4000);
    expect(Math.max(...seconds.values())).toBeLessThan(100);
  });

  it('waits minutes while the quota is spent or sending paused, jittered, never past SQS’s 15 minutes', () => {
    for (const reason of ['quota', 'paused'] as const) {
      expect(deferDelayMs(reason, 0, timings, () => 0)).toBe(300_000);
      expect(deferDelayMs(reason, 5, timings, () => 0.999)).toBeLessThanOrEqual(MAX_DEFER_MS);
      expect(deferDelayMs(reason, 0, timings, () => 0.5)).toBe(600_000);
    }
  });

  it('defers a busy batch until the schedule has room, spread over two first backoffs, never growing', () => {
    expect(deferDelayMs('busy', 0, timings, () => 0, 20_000)).toBe(20_000);
    expect(deferDelayMs('busy', 0, timings, () => 0.5, 20_000)).toBe(21_000);
    // However often it was throttled before: waiting for room is not backing off.
    expect(deferDelayMs('busy', 9, timings, () => 0.5, 20_000)).toBe(21_000);
    expect(deferDelayMs('time', 9, timings, () => 0.999, 0)).toBeLessThan(2_000);
    expect(deferDelayMs('busy', 0, timings, () => 0, 10_000_000)).toBe(MAX_DEFER_MS);
  });

  it('knows SES takes nothing when sending is paused or the 24-hour quota is spent (counting what went since the read)', () => {
    expect(blockedBy(quota(), 0)).toBeUndefined();
    expect(blockedBy(quota({ sendingEnabled: false }), 0)).toBe('paused');
    expect(blockedBy(quota({ max24HourSend: 200, sentLast24Hours: 200 }), 0)).toBe('quota');
    expect(blockedBy(quota({ max24HourSend: 200, sentLast24Hours: 190 }), 9)).toBeUndefined();
    expect(blockedBy(quota({ max24HourSend: 200, sentLast24Hours: 190 }), 10)).toBe('quota');
    expect(blockedBy(quota({ max24HourSend: -1, sentLast24Hours: 10 ** 9 }), 0)).toBeUndefined();
  });
});

describe('SendingLimits (what one consumer instance knows of the account)', () => {
  const reader = (quotas: (SendQuota | Error)[]) => {
    const reads: number[] = [];
    return {
      reads,
      read: async () => {
        reads.push(reads.length);
        const next = quotas.length > 1 ? quotas.shift() : quotas[0];
        if (next instanceof Error) throw next;
        return next as SendQuota;
      },
    };
  };

  it("paces at SES's rate, read once per refresh period", async () => {
    const r = reader([quota({ maxSendRate: 14 }), quota({ maxSendRate: 50 })]);
    const limits = new SendingLimits(r, { refreshMs: 300_000, blockedRecheckMs: 300_000 });
    expect(await limits.current(0)).toEqual({ ratePerSecond: 14 });
    expect(await limits.current(299_999)).toEqual({ ratePerSecond: 14 });
    expect(r.reads).toHaveLength(1);
    // The next read goes on beside the sending; once it answered, its rate is used.
    expect(await limits.current(300_000)).toEqual({ ratePerSecond: 14 });
    await Promise.resolve();
    expect(r.reads).toHaveLength(2);
    expect(await limits.current(300_001)).toEqual({ ratePerSecond: 50 });
  });

  it('takes a rate set by the operator where it is lower than SES’s, never higher', async () => {
    const lower = new SendingLimits(reader([quota({ maxSendRate: 14 })]), {
      refreshMs: 1000,
      blockedRecheckMs: 1000,
      rateOverride: 5,
    });
    expect(await lower.current(0)).toEqual({ ratePerSecond: 5 });
    const higher = new SendingLimits(reader([quota({ maxSendRate: 14 })]), {
      refreshMs: 1000,
      blockedRecheckMs: 1000,
      rateOverride: 50,
    });
    expect(await higher.current(0)).toEqual({ ratePerSecond: 14 });
    // SES cannot be read: the operator's rate stands.
    const unread = new SendingLimits(reader([new Error('AccessDenied')]), {
      refreshMs: 1000,
      blockedRecheckMs: 1000,
      rateOverride: 5,
    });
    expect(await unread.current(0)).toEqual({ ratePerSecond: 5 });
  });

  it('waits for the first read only: later ones go on beside the sending, the last known limits used meanwhile', async () => {
    let release: (q: SendQuota) => void = () => undefined;
    let reads = 0;
    const limits = new SendingLimits(
      {
        read: () => {
          reads++;
          return reads === 1
            ? Promise.resolve(quota({ maxSendRate: 14 }))
            : new Promise<SendQuota>((resolve) => {
                release = resolve;
              });
        },
      },
      { refreshMs: 1000, blockedRecheckMs: 1000 },
    );
    expect(await limits.current(0)).toEqual({ ratePerSecond: 14 });
    // A read that hangs does not hold the batch.
    expect(await limits.current(2000)).toEqual({ ratePerSecond: 14 });
    release(quota({ maxSendRate: 20 }));
    await Promise.resolve();
    await Promise.resolve();
    expect(await limits.current(2001)).toEqual({ ratePerSecond: 20 });
  });

  /** A clock that moves only when the limits wait (their sleep), and what they waited. */
  const fakeTime = () => {
    const time = { now: 0, waited: [] as number[] };
    return {
      time,
      clock: () => time.now,
      sleep: async (ms: number) => {
        time.waited.push(ms);
        time.now += ms;
      },
    };
  };

  it('never paces at a guessed rate: with no read yet, a batch waits a few seconds for one, then is told the rate is unknown', async () => {
    const errors: unknown[] = [];
    const r = reader([new Error('AccessDenied'), new Error('Throttling'), new Error('Throttling'), quota()]);
    const { time, clock, sleep } = fakeTime();
    const limits = new SendingLimits(r, {
      refreshMs: 300_000,
      blockedRecheckMs: 300_000,
      onReadError: (e) => errors.push(e),
      clock,
      sleep,
      timings: { waitMs: 5_000, pollMs: 500, leaseMs: 2_000 },
    });
    expect(await limits.current(0)).toEqual({ blocked: 'unknown' });
    // It waited 5 s, retrying the read each time its claim had passed: at 0, 2 and 4 s.
    expect(time.now).toBe(5_000);
    expect(r.reads).toHaveLength(3);
    expect(errors).toHaveLength(3);
    // SES answers again: the next batch has its rate, read once, and keeps it when a later read fails.
    expect(await limits.current(6_000)).toEqual({ ratePerSecond: 14 });
    expect(r.reads).toHaveLength(4);
    const failing = reader([quota({ maxSendRate: 14 }), new Error('Throttling')]);
    const kept = new SendingLimits(failing, { refreshMs: 1_000, blockedRecheckMs: 1_000, clock, sleep });
    expect(await kept.current(10_000)).toEqual({ ratePerSecond: 14 });
    expect(await kept.current(20_000)).toEqual({ ratePerSecond: 14 });
    await vi.waitFor(() => expect(failing.reads).toHaveLength(2));
    expect(await kept.current(20_001)).toEqual({ ratePerSecond: 14 });
  });

  it('with a rate set by the operator, an unknown SES rate holds nothing back: the operator’s rate is used at once', async () => {
    const { time, clock, sleep } = fakeTime();
    const limits = new SendingLimits(reader([new Error('AccessDenied')]), {
      refreshMs: 300_000,
      blockedRecheckMs: 300_000,
      rateOverride: 5,
      clock,
      sleep,
    });
    expect(await limits.current(0)).toEqual({ ratePerSecond: 5 });
    expect(time.waited).toEqual([]);
  });

  it('counts what it sent against the quota until the next read', async () => {
    const limits = new SendingLimits(reader([quota({ max24HourSend: 200, sentLast24Hours: 198 })]), {
      refreshMs: 60_000,
      blockedRecheckMs: 60_000,
    });
    expect(await limits.current(0)).toEqual({ ratePerSecond: 14 });
    limits.sent(2);
    expect(await limits.current(1)).toEqual({ ratePerSecond: 14, blocked: 'quota' });
  });

  it('after SES refused for a spent quota or paused sending, sends nothing until the recheck, then reads again', async () => {
    const r = reader([quota(), quota({ sendingEnabled: false }), quota()]);
    const limits = new SendingLimits(r, { refreshMs: 300_000, blockedRecheckMs: 5_000 });
    await limits.current(0);
    limits.refused('paused', 10);
    expect(await limits.current(4_000)).toEqual({ ratePerSecond: 14, blocked: 'paused' });
    expect(r.reads).toHaveLength(1);
    // At the recheck the limits are read again, beside the sending (this batch is a probe): SES
    // still says paused, so what follows is blocked by what it read.
    await limits.current(5_010);
    await Promise.resolve();
    expect(r.reads).toHaveLength(2);
    expect(await limits.current(5_020)).toEqual({ ratePerSecond: 14, blocked: 'paused' });
    // Resumed: the next read says so, and sending goes on by itself.
    await limits.current(305_010);
    await Promise.resolve();
    expect(await limits.current(305_020)).toEqual({ ratePerSecond: 14 });
  });
});

describe('booking precision (the consumer’s booking code on a schedule that books as the table does)', () => {
  /**
   * Books `batches` full batches of `batchSize` one-recipient emails at SES's `rate` through
   * bookSlots, all at one moment, on a schedule item kept in memory the way DynamoSendPacer keeps
   * it (each booking starts where the last ended): what rate the schedule carries, and how many
   * writes a second its item takes at that rate.
   */
  async function carried(rate: number, batchSize: number, batches: number) {
    let nextAt = Number.NEGATIVE_INFINITY;
    let writes = 0;
    const pacer: SendPacer = {
      reserve: async (durationMs, nowMs, latestStartMs) => {
        const startAt = Math.max(nextAt, nowMs);
        if (startAt > latestStartMs) return { busyUntil: startAt };
        writes++;
        nextAt = startAt + durationMs;
        return { startAt };
      },
    };
    const now = 1_700_000_000_000;
    const limits = new SendingLimits(reader(quota({ maxSendRate: rate })), {
      refreshMs: 300_000,
      blockedRecheckMs: 300_000,
    });
    const deps = { clock: { now: () => new Date(now) }, pace: { pacer, limits } } as unknown as DeliverDeps;
    const email = { recipients: 1, job: { content: {} }, queued: {} } as unknown as Ready;
    const starts: number[] = [];
    for (let b = 0; b < batches; b++) {
      const slots = await bookSlots(
        deps,
        Array.from({ length: batchSize }, () => email),
      );
      for (const slot of slots) starts.push((slot as Slot).at);
    }
    const seconds = (nextAt - now) / 1000;
    // No two sends closer than the paced rate allows.
    const sorted = [...starts].sort((a, b) => a - b);
    const closest = Math.min(...sorted.slice(1).map((at, i) => at - (sorted[i] as number)));
    expect(closest).toBeGreaterThanOrEqual(1000 / pacedRate(rate) - 1e-3);
    return { perSecond: starts.length / seconds, writesPerSecond: writes / seconds };
  }
  const reader = (q: SendQuota) => ({ read: async () => q });

  it('at SES 20,000/s with batches of 40 carries at least 19,700/s (99.5 % of the 19,800 it paces at), its item under 60 % of 1,000 writes a second', async () => {
    const { perSecond, writesPerSecond } = await carried(20_000, 40, 500);
    expect(perSecond).toBeGreaterThanOrEqual(0.995 * pacedRate(20_000));
    expect(perSecond).toBeLessThanOrEqual(pacedRate(20_000));
    expect(writesPerSecond).toBeLessThan(600);
    // Batches of 20 carry the rate too (whole milliseconds carried 10,000/s), at 980 writes a second.
    expect((await carried(20_000, 20, 500)).perSecond).toBeGreaterThanOrEqual(19_700);
  });

  it('at SES 1,000/s with the default batches of 10 carries at least 985/s (whole milliseconds carried 909/s)', async () => {
    const { perSecond } = await carried(1_000, 10, 100);
    expect(perSecond).toBeGreaterThanOrEqual(0.995 * pacedRate(1_000));
    expect(perSecond).toBeLessThanOrEqual(pacedRate(1_000));
  });

  it('rounds a booking up to a whole microsecond, never down', () => {
    expect(durationMs(20, 19_800)).toBe(1.011);
    expect(durationMs(40, 19_800)).toBe(2.021);
    expect(durationMs(10, 990)).toBe(10.102);
    expect(durationMs(1, 1_000_000)).toBe(0.001);
  });
});
