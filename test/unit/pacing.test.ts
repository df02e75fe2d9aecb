import { describe, expect, it } from 'vitest';
import {
  blockedBy,
  type DeferTimings,
  deferDelayMs,
  durationMs,
  MAX_DEFER_MS,
  SendingLimits,
  type SendQuota,
  slotsFor,
  slotTimes,
} from '../../functions/shared/pacing.js';

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

  it('keeps the last known limits when a read fails, and starts at the sandbox’s 1 per second', async () => {
    const errors: unknown[] = [];
    const r = reader([new Error('AccessDenied'), quota({ maxSendRate: 14 }), new Error('throttled')]);
    const limits = new SendingLimits(r, {
      refreshMs: 1000,
      blockedRecheckMs: 1000,
      onReadError: (e) => errors.push(e),
    });
    expect(await limits.current(0)).toEqual({ ratePerSecond: 1 });
    // Nothing known yet: the next read is waited for too.
    expect(await limits.current(1000)).toEqual({ ratePerSecond: 14 });
    expect(await limits.current(2000)).toEqual({ ratePerSecond: 14 });
    await Promise.resolve();
    expect(await limits.current(2001)).toEqual({ ratePerSecond: 14 });
    expect(errors).toHaveLength(2);
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
