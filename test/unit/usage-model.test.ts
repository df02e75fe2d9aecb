import { describe, expect, it } from 'vitest';
import { usageAnswer } from '../../functions/usage/model.js';

/** The usage answer from the stored SES read and our counters (functions/usage/model.ts). */
const NOW = Date.parse('2026-11-22T10:30:00Z');
const DAY = 86_400_000;
const quota = { maxSendRate: 14, max24HourSend: 50_000, sentLast24Hours: 45_000, sendingEnabled: true };
const answer = (readAtMs: number) =>
  usageAnswer({
    nowMs: NOW,
    account: { quota, readAtMs },
    day: { sent: 3, received: 1 },
    month: { sent: 90, received: 4 },
    domains: 1,
    ratePerSecond: 10,
  });

describe('usageAnswer', () => {
  it("takes SES's count as last read while the read is less than a day old", () => {
    expect(answer(NOW - DAY + 1).emails.daily).toMatchObject({
      used: 45_000,
      limit: 50_000,
      sent: 3,
      resets_at: new Date(NOW + 1).toISOString(),
    });
  });

  it('after a quiet day (the last read a day old or more): our own count, and a reset not in the past', () => {
    // SES is read only when something is sent: its SentLast24Hours is then yesterday's, not today's.
    for (const readAt of [NOW - DAY, NOW - 3 * DAY]) {
      const body = answer(readAt);
      expect(body.emails.daily).toMatchObject({
        used: 3,
        limit: 50_000,
        sent: 3,
        resets_at: new Date(NOW + DAY).toISOString(),
      });
      // The limits themselves are still the last read's, and say when it was.
      expect(body.sending).toEqual({
        paused: false,
        max_send_rate: 14,
        limits_read_at: new Date(readAt).toISOString(),
      });
    }
  });
});
