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
  /**
   * The account's rate is not known yet (SES never read, or its read failing): after waiting for it
   * a few seconds, back in seconds, until it is.
   */
  | 'unknown'
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
 * has room (`busyForMs`), a short invocation (or an unknown rate) for the next; both up to two first backoffs more, at
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
  if (reason === 'busy' || reason === 'time' || reason === 'unknown')
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

/**
 * How long `slots` recipients take at `ratePerSecond`, in ms, rounded up to a whole microsecond (not
 * to a whole millisecond: a batch of 20 at 19,800/s takes 1.0101 ms, which a whole millisecond
 * would book as 2 and carry 10,000/s; a microsecond loses under 0.1 % of the rate). Rounded up, so
 * the schedule never goes faster than the rate; the schedule item keeps the fraction (a DynamoDB
 * number, exact to 38 digits).
 */
export const durationMs = (slots: number, ratePerSecond: number): number =>
  slots <= 0 ? 0 : Math.ceil((slots * 1_000_000) / Math.max(ratePerSecond, 0.001) - 1e-6) / 1000;

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

/** The account's limits as last read from SES, kept for every consumer instance beside the send schedule. */
export interface StoredSendQuota {
  quota?: SendQuota;
  /** When SES was read for it (ms); absent: never (or every read so far failed). */
  readAt?: number;
  /** Until when the read of SES one instance claimed is its own (ms): nobody claims another before. */
  claimedUntil?: number;
}

/**
 * Where the account's limits are kept for all consumer instances (an item beside the schedule's in
 * the table), so one of them reads SES for all: the one whose conditional claim wins.
 */
export interface SendQuotaStore {
  get(): Promise<StoredSendQuota>;
  /**
   * Claims the next read of SES for `leaseMs` from `nowMs`: true when nobody holds a claim and the
   * stored read is still the one this instance saw (`seenReadAt`; undefined: none yet).
   */
  claim(nowMs: number, seenReadAt: number | undefined, leaseMs: number): Promise<boolean>;
  /** Keeps a read of SES, unless a later one is kept already. */
  put(quota: SendQuota, readAtMs: number): Promise<void>;
}

/** The store of one instance alone (tests; a consumer that shares its limits with nobody). */
export function memoryQuotaStore(): SendQuotaStore {
  let stored: StoredSendQuota = {};
  return {
    get: async () => ({ ...stored }),
    claim: async (nowMs, seenReadAt, leaseMs) => {
      if ((stored.claimedUntil ?? Number.NEGATIVE_INFINITY) > nowMs || stored.readAt !== seenReadAt)
        return false;
      stored = { ...stored, claimedUntil: nowMs + leaseMs };
      return true;
    },
    put: async (quota, readAtMs) => {
      if (stored.readAt === undefined || stored.readAt < readAtMs)
        stored = { ...stored, quota, readAt: readAtMs };
    },
  };
}

/** How the instances share the reads of SES's GetAccount (ms). */
export const ACCOUNT_READ_TIMINGS = {
  /** How old an instance's copy of the stored limits may get before it reads the item again (a GetItem). */
  viewMs: 10_000,
  /**
   * A claimed read of SES: nobody claims the next before this passes. SES allows about one
   * GetAccount a second per account; the consumers' client tries a call at most twice, so the
   * fleet makes at most two calls per 2 s, however many instances run.
   */
  leaseMs: 2_000,
  /** How long a batch waits for a rate nobody has read yet before it is put back for later... */
  waitMs: 5_000,
  /** ...looking at the stored limits this often meanwhile. */
  pollMs: 500,
};

/** The account's limits for a batch: the rate to pace at and whether SES takes emails now; or not known yet. */
export type AccountLimits =
  | { ratePerSecond: number; blocked?: 'quota' | 'paused' }
  | { ratePerSecond?: undefined; blocked: 'unknown' };

/**
 * What a send consumer instance knows of the account's limits: the quota one instance reads from
 * SES for all (GetAccount, kept in `store`) every `refreshMs`, what this instance handed SES since,
 * and, after SES refused it for a spent quota or paused sending, that SES takes nothing until
 * `blockedRecheckMs` later (then the quota is read again). The instance copies the stored limits
 * every `viewMs`; when the stored read is due, the instance whose conditional claim wins reads SES
 * (at most one read per `leaseMs` for the whole fleet) while the others go on with the stored one.
 * A read that fails leaves the last stored limits in use. With none at all (SES never read, or its
 * reads failing), a batch waits for one up to `waitMs`, then is told the rate is unknown (it goes
 * back on the queue for later): it never paces at a guessed rate. A rate set by the operator is
 * used where it is lower than SES's, and alone while SES's is unknown (it can only slow sending
 * down: SES refuses what goes faster than its own).
 */
export class SendingLimits {
  private view: StoredSendQuota = {};
  private viewedAt = Number.NEGATIVE_INFINITY;
  private refreshing?: Promise<void>;
  private sentSinceRead = 0;
  private blockedUntil = Number.NEGATIVE_INFINITY;
  private blockedFor?: 'quota' | 'paused';
  private refusedAt = Number.NEGATIVE_INFINITY;
  private readonly store: SendQuotaStore;
  private readonly timings: typeof ACCOUNT_READ_TIMINGS;

  constructor(
    private readonly reader: { read(): Promise<SendQuota> },
    private readonly options: {
      refreshMs: number;
      blockedRecheckMs: number;
      /** A rate set by the operator (recipients per second), used instead of SES's. */
      rateOverride?: number;
      onReadError?: (error: unknown) => void;
      /** Where the limits are shared (absent: this instance's own). */
      store?: SendQuotaStore;
      timings?: Partial<typeof ACCOUNT_READ_TIMINGS>;
      /** Measures the wait for an unknown rate (absent: Date.now); the times passed to `current` stay the caller's. */
      clock?: () => number;
      sleep?: (ms: number) => Promise<void>;
    },
  ) {
    this.store = options.store ?? memoryQuotaStore();
    this.timings = { ...ACCOUNT_READ_TIMINGS, ...options.timings };
  }

  /** The rate to pace at, and whether SES takes emails at all now; or that the rate is not known yet. */
  async current(nowMs: number): Promise<AccountLimits> {
    await this.learn(nowMs);
    const { rateOverride } = this.options;
    if (!this.view.quota && rateOverride === undefined) {
      // Nothing known: wait a little for a read (this instance's or another's), then give up for now.
      const clock = this.options.clock ?? Date.now;
      const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
      const started = clock();
      while (!this.view.quota && clock() - started < this.timings.waitMs) {
        await sleep(this.timings.pollMs);
        await this.learn(nowMs + clock() - started);
      }
    }
    const quota = this.view.quota;
    const sesRate = quota?.maxSendRate;
    if (sesRate === undefined && rateOverride === undefined) return { blocked: 'unknown' };
    const ratePerSecond =
      rateOverride !== undefined && sesRate !== undefined
        ? Math.min(rateOverride, sesRate)
        : ((rateOverride ?? sesRate) as number);
    if (this.blockedFor && nowMs < this.blockedUntil) return { ratePerSecond, blocked: this.blockedFor };
    const blocked = quota ? blockedBy(quota, this.sentSinceRead) : undefined;
    return blocked ? { ratePerSecond, blocked } : { ratePerSecond };
  }

  /** Recipients handed to SES (counted against the 24-hour quota until the next read). */
  sent(recipients: number): void {
    this.sentSinceRead += recipients;
  }

  /** SES refused for a spent quota or paused sending: nothing more goes until the recheck. */
  refused(reason: 'quota' | 'paused', nowMs: number): void {
    this.blockedFor = reason;
    this.refusedAt = nowMs;
    this.blockedUntil = nowMs + this.options.blockedRecheckMs;
  }

  /**
   * Brings this instance's copy up to date (every `viewMs`, or each time while nothing is known),
   * and reads SES for everyone when the stored read is due and nobody holds the claim: waited for
   * while nothing is known, else beside the sending.
   */
  private async learn(nowMs: number): Promise<void> {
    if (!this.view.quota || nowMs - this.viewedAt >= this.timings.viewMs) await this.look(nowMs);
    if (this.refreshing) {
      if (!this.view.quota) await this.refreshing;
      return;
    }
    if (!this.due(nowMs)) return;
    // Another instance may have read or claimed it since this one looked: look again first, so
    // that only the instances that still see it due try the (conditional) claim.
    if (this.viewedAt < nowMs) await this.look(nowMs);
    if (!this.due(nowMs)) return;
    const reading = this.refresh(nowMs);
    if (!this.view.quota) await reading;
  }

  /** Whether the stored read should be replaced now: none, too old, or older than SES's refusal once the recheck is due. */
  private due(nowMs: number): boolean {
    if ((this.view.claimedUntil ?? Number.NEGATIVE_INFINITY) > nowMs) return false;
    const { readAt } = this.view;
    if (readAt === undefined || !this.view.quota) return true;
    if (nowMs - readAt >= this.options.refreshMs) return true;
    return this.blockedFor !== undefined && nowMs >= this.blockedUntil && readAt < this.refusedAt;
  }

  private refresh(nowMs: number): Promise<void> {
    this.refreshing ??= this.claimAndRead(nowMs)
      .catch((error) => this.options.onReadError?.(error))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  private async claimAndRead(nowMs: number): Promise<void> {
    const claimedUntil = nowMs + this.timings.leaseMs;
    if (!(await this.store.claim(nowMs, this.view.readAt, this.timings.leaseMs))) {
      // Another instance read it, or is reading it: take what it kept.
      await this.look(nowMs);
      return;
    }
    this.view = { ...this.view, claimedUntil };
    const quota = await this.reader.read();
    this.accept({ quota, readAt: nowMs, claimedUntil }, nowMs);
    await this.store.put(quota, nowMs);
  }

  private async look(nowMs: number): Promise<void> {
    try {
      this.accept(await this.store.get(), nowMs);
    } catch (error) {
      this.viewedAt = nowMs;
      this.options.onReadError?.(error);
    }
  }

  /** Takes a read newer than this instance's: what was sent since its own read no longer counts, nor a refusal before it. */
  private accept(stored: StoredSendQuota, nowMs: number): void {
    this.viewedAt = nowMs;
    const claimedUntil = Math.max(
      stored.claimedUntil ?? Number.NEGATIVE_INFINITY,
      this.view.claimedUntil ?? Number.NEGATIVE_INFINITY,
    );
    const claim = Number.isFinite(claimedUntil) ? { claimedUntil } : {};
    if (
      stored.quota &&
      stored.readAt !== undefined &&
      stored.readAt > (this.view.readAt ?? Number.NEGATIVE_INFINITY)
    ) {
      this.view = { quota: stored.quota, readAt: stored.readAt, ...claim };
      this.sentSinceRead = 0;
      if (stored.readAt >= this.refusedAt) this.blockedFor = undefined;
    } else this.view = { ...this.view, ...claim };
  }
}
