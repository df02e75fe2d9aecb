import * as z from 'zod/mini';
import { ConfigurationError } from '../functions/shared/config.js';
import type { SesReply } from './ses-identities.js';

/**
 * The SES account's sending limits, enforced locally as SES enforces them on AWS, so that a test
 * here meets what production meets: a maximum send rate and a 24-hour quota, both counted in
 * recipients (a message to 3 counts 3), the sandbox (1 per second, 200 per 24 hours, recipients
 * only at verified identities or the mailbox simulator), and paused sending. SendEmail answers
 * beyond them as SES v2 does (status, error type and message), and GetAccount reports them.
 *
 * The rate is a token bucket holding one second of sending, refilled at the rate: a message goes
 * while a whole token is left, and takes one per recipient, so a message to several recipients
 * may overdraw it and the next waits until it is repaid ("you can exceed this quota for short
 * bursts", as SES words it; a message to 5 at 1 per second leaves the next 5 seconds refused).
 */
export interface SesAccountSettings {
  /** Recipients per second. @default 14 (1 in the sandbox) */
  maxSendRate?: number;
  /** Recipients per rolling 24 hours. @default 50,000 (200 in the sandbox) */
  max24HourSend?: number;
  /** Only verified identities (and the mailbox simulator) as recipients. @default false */
  sandbox?: boolean;
  /** Sending paused for the account. @default false */
  sendingPaused?: boolean;
  /** The 24-hour quota counts as spent for this long after the start, then is restored (`npm run chaos`). */
  quotaSpentForMs?: number;
}

const positive = z.optional(z.coerce.number().check(z.gt(0)));
const flag = z.optional(z.enum(['true', 'false']));
const envSchema = z.object({
  LOCAL_SES_MAX_SEND_RATE: positive,
  LOCAL_SES_MAX_24H_SEND: positive,
  LOCAL_SES_SANDBOX: flag,
  LOCAL_SES_SENDING_PAUSED: flag,
});

/** The local SES account's settings from `npm start`'s environment (LOCAL_SES_*). */
export function sesAccountFromEnv(env: NodeJS.ProcessEnv = process.env): SesAccountSettings {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigurationError(parsed.error.issues);
  const { LOCAL_SES_MAX_SEND_RATE, LOCAL_SES_MAX_24H_SEND, LOCAL_SES_SANDBOX, LOCAL_SES_SENDING_PAUSED } =
    parsed.data;
  return {
    ...(LOCAL_SES_MAX_SEND_RATE ? { maxSendRate: LOCAL_SES_MAX_SEND_RATE } : {}),
    ...(LOCAL_SES_MAX_24H_SEND ? { max24HourSend: LOCAL_SES_MAX_24H_SEND } : {}),
    ...(LOCAL_SES_SANDBOX ? { sandbox: LOCAL_SES_SANDBOX === 'true' } : {}),
    ...(LOCAL_SES_SENDING_PAUSED ? { sendingPaused: LOCAL_SES_SENDING_PAUSED === 'true' } : {}),
  };
}

const DAY_MS = 86_400_000;

export class LocalSesAccount {
  readonly maxSendRate: number;
  readonly max24HourSend: number;
  readonly sandbox: boolean;
  private sendingPaused: boolean;
  private readonly quotaSpentUntil: number;
  private tokens: number;
  private refilledAt: number;
  /** Recipients taken, by time, over the last 24 hours (oldest first). */
  private readonly window: { at: number; count: number }[] = [];
  private inWindow = 0;

  constructor(settings: SesAccountSettings = {}, now = Date.now()) {
    this.sandbox = settings.sandbox ?? false;
    this.maxSendRate = settings.maxSendRate ?? (this.sandbox ? 1 : 14);
    this.max24HourSend = settings.max24HourSend ?? (this.sandbox ? 200 : 50_000);
    this.sendingPaused = settings.sendingPaused ?? false;
    this.quotaSpentUntil = now + (settings.quotaSpentForMs ?? 0);
    this.tokens = this.maxSendRate;
    this.refilledAt = now;
  }

  /** Counts what SES took before a restart (from its ledger), so the 24-hour window carries over. */
  restore(taken: { at: number; recipients: number }[]): void {
    for (const entry of taken.sort((a, b) => a.at - b.at)) this.record(entry.at, entry.recipients);
  }

  /** Turns sending off or on, as SES does for an account under review. */
  setSendingPaused(paused: boolean): void {
    this.sendingPaused = paused;
  }

  /**
   * SendEmail's limits, checked in SES's order: paused, the sandbox's recipients, the 24-hour
   * quota, the rate. The refusal SES answers, or undefined when it takes the message (and counts
   * its recipients).
   */
  take(recipients: string[], verified: (address: string) => boolean, now = Date.now()): SesReply | undefined {
    if (this.sendingPaused)
      return refusal(
        400,
        'SendingPausedException',
        "The account's ability to send email is currently paused.",
      );
    if (this.sandbox) {
      const unverified = recipients.filter((address) => !verified(address));
      if (unverified.length)
        return refusal(
          400,
          'MessageRejected',
          `Email address is not verified. The following identities failed the check in region US-EAST-1: ${unverified.join(', ')}`,
        );
    }
    if (this.sentLast24Hours(now) >= this.max24HourSend)
      return refusal(400, 'LimitExceededException', 'Daily message quota exceeded.');
    this.refill(now);
    if (this.tokens < 1) return refusal(429, 'TooManyRequestsException', 'Maximum sending rate exceeded.');
    this.tokens -= recipients.length;
    this.record(now, recipients.length);
    return undefined;
  }

  /** GetAccount's answer, in SES v2's shape. */
  getAccount(now = Date.now()): SesReply {
    return {
      status: 200,
      body: {
        DedicatedIpAutoWarmupEnabled: false,
        EnforcementStatus: 'HEALTHY',
        ProductionAccessEnabled: !this.sandbox,
        SendQuota: {
          Max24HourSend: this.max24HourSend,
          MaxSendRate: this.maxSendRate,
          SentLast24Hours: this.sentLast24Hours(now),
        },
        SendingEnabled: !this.sendingPaused,
        SuppressionAttributes: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
      },
    };
  }

  private sentLast24Hours(now: number): number {
    while (this.window.length && (this.window[0]?.at ?? now) <= now - DAY_MS)
      this.inWindow -= this.window.shift()?.count ?? 0;
    return now < this.quotaSpentUntil ? Math.max(this.inWindow, this.max24HourSend) : this.inWindow;
  }

  private refill(now: number) {
    this.tokens = Math.min(
      this.maxSendRate,
      this.tokens + ((now - this.refilledAt) / 1000) * this.maxSendRate,
    );
    this.refilledAt = now;
  }

  private record(at: number, count: number) {
    this.window.push({ at, count });
    this.inWindow += count;
  }
}

const refusal = (status: number, errorType: string, message: string): SesReply => ({
  status,
  errorType,
  body: { message },
});
