/**
 * Sending at the account's SES pace: the arithmetic, without AWS.
 *
 * SES limits an account to a maximum send rate (recipients per second: a message to 3 recipients
 * counts 3) and a number of recipients per 24 hours, and refuses what goes over them. Every send
 * consumer, however many run at once, takes its turn from one shared schedule (a "next free time"
 * in the table, see ports.ts SendPacer): a batch reserves one slot per recipient, spaced 1/rate
 * apart, and sends each email at its slot. So together they never go faster than the rate.
 *
 * What SES still refuses for now (a throttle, a spent daily quota, sending paused) is not a
 * failure: the email goes back on the queue as a new message (SQS cannot reset a message's receive
 * count), after a backoff that grows with each deferral and is jittered, so deferred emails never
 * come back in one wave.
 */

/** The account's sending limits, as SES's GetAccount reports them. */
export interface SendQuota {
  /** Recipients per second. */
  maxSendRate: number;
  /** Recipients per rolling 24 hours (-1: unlimited). */
  max24HourSend: number;
  sentLast24Hours: number;
  /** False when SES paused sending for the account. */
  sendingEnabled: boolean;
}

/** Why an email is put back for later instead of sent now (none of them counts as an attempt). */
export type DeferReason =
  /** SES throttled it (its maximum send rate): back in seconds. */
  | 'rate'
  /** The shared schedule is booked further ahead than this invocation can wait. */
  | 'busy'
  /** Not enough of the invocation's time is left to fetch its files and hand it to SES. */
  | 'time'
  /** The account's 24-hour quota is spent: back in minutes, until SES takes emails again. */
  | 'quota'
  /** SES paused sending for the account: the same. */
  | 'paused';

/** How long deferrals wait, by kind (from the pipeline's timings; seconds on AWS, less locally). */
export interface DeferTimings {
  /** A first throttle waits about this long; each further one of the same email twice as long... */
  throttleBackoffMs: number;
  /** ...up to this. */
  throttleBackoffMaxMs: number;
  /** A spent quota or paused sending: each retry waits between these. */
  blockedRetryMinMs: number;
  blockedRetryMaxMs: number;
}

/** SQS's longest message delay. */
export const MAX_DEFER_MS = 900_000;

/**
 * How long a deferred email waits now, in ms. A throttled one backs off exponentially with the
 * times SES throttled it before (`throttles`), with "equal jitter" (half fixed, half random), so a
 * wave of throttled emails spreads out and a long throttling slows each of them down. A spent quota
 * or paused sending waits minutes, jittered over the whole range. A full schedule waits until it
 * has room (`busyForMs`), a short invocation for the next; both up to two first backoffs more, at
 * random, so they do not all come back at once. `random` is in [0, 1).
 */
export function deferDelayMs(
  reason: DeferReason,
  throttles: number,
  timings: DeferTimings,
  random: () => number = Math.random,
  /** For `busy`: how far ahead the schedule is booked. */
  busyForMs = 0,
): number {
  if (reason === 'quota' || reason === 'paused') {
    const { blockedRetryMinMs: min, blockedRetryMaxMs: max } = timings;
    return Math.min(MAX_DEFER_MS, Math.round(min + random() * (max - min)));
  }
  if (reason === 'busy' || reason === 'time')
    return Math.min(MAX_DEFER_MS, Math.round(busyForMs + random() * 2 * timings.throttleBackoffMs));
  const ceiling = Math.min(
    timings.throttleBackoffMaxMs,
    timings.throttleBackoffMs * 2 ** Math.min(30, Math.max(0, throttles)),
  );
  return Math.min(MAX_DEFER_MS, Math.round(ceiling / 2 + random() * (ceiling / 2)));
}

/**
 * The rate the shared schedule books at, for SES's maximum send rate. A send reaches SES a little
 * after its slot, by a delay that varies (the claim's write, the network), so two sends booked
 * 1/rate apart may arrive closer. SES allows bursts of about a second's sending, which absorbs that
 * from 2 per second up; below, it holds a single send, and one arriving a few milliseconds early is
 * throttled. So the schedule books 1 % under the rate, and 5 % under it below 2 per second (50 ms
 * of room per send at the sandbox's 1 per second).
 */
export const pacedRate = (maxSendRate: number): number => maxSendRate * (maxSendRate < 2 ? 0.95 : 0.99);

/** How many slots (recipients, as SES counts them) an email to these addresses takes. */
export const slotsFor = (recipients: number): number => Math.max(1, recipients);

/** How long `slots` recipients take at `ratePerSecond`, in ms. */
export const durationMs = (slots: number, ratePerSecond: number): number =>
  Math.ceil((slots * 1000) / Math.max(ratePerSecond, 0.001));

/**
 * The start times of each email of a batch within one reservation that starts at `startAt`: each
 * email's first recipient gets the next free slot, and its recipients take as many.
 */
export function slotTimes(startAt: number, slots: readonly number[], ratePerSecond: number): number[] {
  let offset = 0;
  return slots.map((count) => {
    const at = startAt + durationMs(offset, ratePerSecond);
    offset += count;
    return at;
  });
}

/** Why SES will not take an email now, from the account's quota as last read; undefined: it may. */
export function blockedBy(quota: SendQuota, sentSinceRead: number): 'quota' | 'paused' | undefined {
  if (!quota.sendingEnabled) return 'paused';
  if (quota.max24HourSend >= 0 && quota.sentLast24Hours + sentSinceRead >= quota.max24HourSend)
    return 'quota';
  return undefined;
}

/**
 * What a send consumer knows of the account's limits, per function instance: the quota read from
 * SES every `refreshMs`, what it handed SES since, and, after SES refused for a spent quota or
 * paused sending, that SES takes nothing until `blockedRecheckMs` later (then the quota is read
 * again). The first read is waited for; later ones happen beside the sending, the last known limits
 * used meanwhile. Reads that fail keep the last known limits; with none yet, the sandbox's 1 per
 * second, the slowest an account sends. A rate set by the operator is used where it is lower than
 * SES's (it can only slow sending down: SES refuses what goes faster than its own).
 */
export class SendingLimits {
  private quota?: SendQuota;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading?: Promise<void>;
  private sentSinceRead = 0;
  private blockedUntil = Number.NEGATIVE_INFINITY;
  private blockedFor?: 'quota' | 'paused';

  constructor(
    private readonly reader: { read(): Promise<SendQuota> },
    private readonly options: {
      refreshMs: number;
      blockedRecheckMs: number;
      /** A rate set by the operator (recipients per second), used instead of SES's. */
      rateOverride?: number;
      onReadError?: (error: unknown) => void;
    },
  ) {}

  /** The rate to pace at, and whether SES takes emails at all now. */
  async current(nowMs: number): Promise<{ ratePerSecond: number; blocked?: 'quota' | 'paused' }> {
    if (nowMs - this.readAt >= this.options.refreshMs || (this.blockedFor && nowMs >= this.blockedUntil)) {
      const reading = this.refresh(nowMs);
      if (!this.quota) await reading;
    }
    const { rateOverride } = this.options;
    const sesRate = this.quota?.maxSendRate;
    const ratePerSecond =
      rateOverride !== undefined && sesRate !== undefined
        ? Math.min(rateOverride, sesRate)
        : (rateOverride ?? sesRate ?? 1);
    if (this.blockedFor && nowMs < this.blockedUntil) return { ratePerSecond, blocked: this.blockedFor };
    const blocked = this.quota ? blockedBy(this.quota, this.sentSinceRead) : undefined;
    return blocked ? { ratePerSecond, blocked } : { ratePerSecond };
  }

  /** Recipients handed to SES (counted against the 24-hour quota until the next read). */
  sent(recipients: number): void {
    this.sentSinceRead += recipients;
  }

  /** SES refused for a spent quota or paused sending: nothing more goes until the recheck. */
  refused(reason: 'quota' | 'paused', nowMs: number): void {
    this.blockedFor = reason;
    this.blockedUntil = nowMs + this.options.blockedRecheckMs;
  }

  private refresh(nowMs: number): Promise<void> {
    this.reading ??= this.reader
      .read()
      .then((quota) => {
        this.quota = quota;
        this.sentSinceRead = 0;
        this.blockedFor = undefined;
      })
      .catch((error) => this.options.onReadError?.(error))
      .finally(() => {
        this.readAt = nowMs;
        this.reading = undefined;
      });
    return this.reading;
  }
}
