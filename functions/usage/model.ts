import type { SendQuota } from '../shared/pacing.js';

/**
 * Usage in the shape SDK 6.38 reads (`GET /v1/usage`, resend.usage.get()), from what the service
 * already keeps: the account's SES limits as the send consumers last read them (stored beside the
 * send schedule: never a GetAccount per request), the email metrics' counters, the domains and the
 * key rate limit. Resend's plan limits have no SES counterpart for most fields; docs/api.md says
 * what each holds here. Nothing here touches AWS.
 */

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The 24-hour quota is "nearly spent" past this share (the console warns). */
export const QUOTA_WARNING_SHARE = 0.8;

export interface UsageInput {
  nowMs: number;
  /** The account's SES limits as last stored, and when SES was read; absent: never read yet. */
  account?: { quota: SendQuota; readAtMs: number };
  /** Emails sent and received in the last 24 hours (the counters' hours) and this UTC month. */
  day: { sent: number; received: number };
  month: { sent: number; received: number };
  domains: number;
  /** Requests a second a key may make. */
  ratePerSecond: number;
}

export interface UsageBody {
  object: 'usage';
  emails: {
    daily: { used: number; limit: number | null; sent: number; received: number; resets_at: string };
    monthly: { used: number; limit: number; sent: number; received: number; resets_at: string };
  };
  contacts: { used: number; limit: number };
  segments: { used: number; limit: number | null };
  broadcasts: { used: number; limit: null };
  ai_credits: { used: number; limit: number | null; next_increase_at: string | null };
  automation_runs: { used: number; limit: number; resets_at: string };
  domains: { used: number; limit: number | null };
  rate_limit: { limit: number; duration: string };
  /** Ours: SES's sending state for the account, as last read. */
  sending: { paused: boolean; max_send_rate: number | null; limits_read_at: string | null };
}

/** The first moment of the next UTC month. */
export const nextMonthMs = (nowMs: number) => {
  const now = new Date(nowMs);
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
};
export const monthStartMs = (nowMs: number) => {
  const now = new Date(nowMs);
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
};
const daysInMonth = (nowMs: number) => Math.round((nextMonthMs(nowMs) - monthStartMs(nowMs)) / DAY_MS);

/** An SES limit as the answer gives it: SES's -1 (unlimited) is no limit. */
const limitOf = (value: number) => (value < 0 ? null : value);

export function usageAnswer(input: UsageInput): UsageBody {
  const iso = (ms: number) => new Date(ms).toISOString();
  const quota = input.account?.quota;
  const dailyLimit = quota ? limitOf(quota.max24HourSend) : null;
  // SES is read only when something is sent: a read a day old or more counts nothing of today's
  // window (an idle account's SentLast24Hours would stay at its last value), so our own count stands in.
  const readAtMs =
    input.account && input.nowMs - input.account.readAtMs < DAY_MS ? input.account.readAtMs : undefined;
  const monthReset = iso(nextMonthMs(input.nowMs));
  return {
    object: 'usage',
    emails: {
      daily: {
        // What SES counts against its 24-hour quota (recipients, every sender of the account and
        // region), as last read; before any read, or a day after the last one, our own count of emails sent.
        used: quota && readAtMs !== undefined ? quota.sentLast24Hours : input.day.sent,
        limit: dailyLimit,
        sent: input.day.sent,
        received: input.day.received,
        // A rolling window has no reset: everything counted in `used` has left it 24 hours after it was read.
        // (Never in the past: a day-old read's window has passed, our own count's ends a day from now.)
        resets_at: iso((readAtMs ?? input.nowMs) + DAY_MS),
      },
      monthly: {
        used: input.month.sent,
        // SES has no monthly limit: the most its 24-hour quota lets through this month; -1 unlimited or not read yet.
        limit: dailyLimit === null ? -1 : dailyLimit * daysInMonth(input.nowMs),
        sent: input.month.sent,
        received: input.month.received,
        resets_at: monthReset,
      },
    },
    // Resend's features this service does not have: none used, and no allowance (0 or null).
    contacts: { used: 0, limit: 0 },
    segments: { used: 0, limit: null },
    broadcasts: { used: 0, limit: null },
    ai_credits: { used: 0, limit: null, next_increase_at: null },
    automation_runs: { used: 0, limit: 0, resets_at: monthReset },
    domains: { used: input.domains, limit: null },
    rate_limit: { limit: input.ratePerSecond, duration: '1s' },
    sending: {
      paused: quota ? !quota.sendingEnabled : false,
      max_send_rate: quota ? quota.maxSendRate : null,
      limits_read_at: input.account ? iso(input.account.readAtMs) : null,
    },
  };
}
