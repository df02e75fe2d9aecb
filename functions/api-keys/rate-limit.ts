import { ApiError } from '../shared/errors.js';
import type { ApiKey } from './model.js';
import type { ApiKeyRepository, KeyCount } from './ports.js';

/**
 * Per-key rate limiting with a fixed one-second window: every request of a key in the same second
 * adds one to that second's counter (one small write, no read: the write returns the new count),
 * and a count over the limit is refused. All function instances share the counter, so the limit
 * holds however many instances run.
 *
 * One table item takes at most 1,000 write units a second, so a key whose limit is above
 * SHARD_CAPACITY has its window spread over rate shards: `shardCount(limit)` items, each counting
 * its own share of the limit (`shardLimit`, the shares summing to the limit). A request counts on
 * one shard picked at random (still one write); when that shard refuses it, or is throttled, it
 * tries one other shard before the answer is 429 (a second write, on the refusal path only). A key
 * at the default limit has one shard: the key's own item, as before shards existed.
 */
export const WINDOW_MS = 1000;
export const DEFAULT_RATE_LIMIT = 10;

/**
 * Accepted requests a second one shard is asked to take: 40 % of what one item can be written
 * (1,000 write units a second), leaving room for the writes of refused requests (which consume a
 * write unit too), the second tries, and first-use writes.
 */
export const SHARD_CAPACITY = 400;

/**
 * An instance that saw a shard refuse a key with a count this far over its share (the key is
 * clearly past its limit, not unlucky) refuses that key without a write until the window ends.
 */
export const MEMO_OVER = 1.5;

/**
 * The most rate shards a key has: 64 partitions carry 64,000 writes a second, far past API
 * Gateway's 10,000 requests a second per account, and a revocation writes each one once. Past
 * 64 × SHARD_CAPACITY (25,600/s) each shard takes a larger share; a key sending past what its
 * shards' partitions take is throttled there, which answers 429.
 */
export const MAX_RATE_SHARDS = 64;

/** How many rate shards a key with this limit has: 1 up to SHARD_CAPACITY, then one more per SHARD_CAPACITY, at most MAX_RATE_SHARDS. */
export const shardCount = (limit: number): number =>
  Math.min(MAX_RATE_SHARDS, Math.max(1, Math.ceil(limit / SHARD_CAPACITY)));

/** Shard `shard`'s share of the limit: an even split, the first `limit % shards` shards one more, summing to `limit`. */
export const shardLimit = (limit: number, shards: number, shard: number): number =>
  Math.floor(limit / shards) + (shard < limit % shards ? 1 : 0);

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the count starts again (at least 1). */
  resetSeconds: number;
  allowed: boolean;
}

export const windowOf = (nowMs: number, windowMs = WINDOW_MS) => Math.floor(nowMs / windowMs);

/**
 * The decision for the `count`-th request of a window, at `nowMs`, on a shard allowed `share` of
 * the key's `limit` (the whole limit when the key has one shard). `remaining` is the shard's
 * remaining share scaled to the whole key: an estimate, since the other shards are not read.
 */
export function decide(
  count: number,
  limit: number,
  nowMs: number,
  windowMs = WINDOW_MS,
  share = limit,
): RateLimitState {
  const windowEndMs = (windowOf(nowMs, windowMs) + 1) * windowMs;
  return {
    limit,
    remaining: Math.max(0, Math.floor(((share - count) * limit) / share)),
    resetSeconds: Math.max(1, Math.ceil((windowEndMs - nowMs) / 1000)),
    allowed: count <= share,
  };
}

/** The headers every authenticated response carries (IETF RateLimit header fields, draft 7 names). */
export const rateLimitHeaders = (state: RateLimitState): Record<string, string> => ({
  'ratelimit-limit': String(state.limit),
  'ratelimit-remaining': String(state.remaining),
  'ratelimit-reset': String(state.resetSeconds),
});

export const rateLimitExceeded = (state: RateLimitState) =>
  new ApiError(
    429,
    'rate_limit_exceeded',
    `Too many requests: this API key may make ${state.limit} requests per second. Retry after ${state.resetSeconds} second${state.resetSeconds === 1 ? '' : 's'}.`,
    undefined,
    { 'retry-after': String(state.resetSeconds) },
  );

/**
 * What counting a request decided: no such key (`key` null, a 401), or the key and where it stands.
 * A request refused without knowing the key (throttled, or remembered as over its limit this
 * window) has `key` undefined: it is answered 429 all the same.
 */
export type Admission = { key: null } | { key: ApiKey | undefined; state: RateLimitState };

/**
 * Counts a key's requests on its rate shards (one per function instance: it remembers, per key, a
 * window in which the key is refused without a write). `ofConsole`: it counts the key's console
 * requests (the same items, a count of their own, a limit of their own), not its applications'.
 */
export class KeyRateLimiter {
  readonly shards: number;
  /** Keys refused without a write until the end of this window (by key hash). */
  private readonly refusedIn = new Map<string, number>();

  constructor(
    private readonly keys: Pick<ApiKeyRepository, 'authenticate'>,
    readonly limit: number,
    private readonly random: () => number = Math.random,
    private readonly ofConsole?: boolean,
  ) {
    this.shards = shardCount(limit);
  }

  async admit(hash: string, nowMs: number): Promise<Admission> {
    const window = windowOf(nowMs);
    const at = new Date(nowMs).toISOString();
    const refused = (count: number, share: number) =>
      decide(Math.max(count, share + 1), this.limit, nowMs, WINDOW_MS, share);
    if (this.refusedIn.get(hash) === window) return { key: undefined, state: refused(0, this.limit) };
    const first = Math.floor(this.random() * this.shards);
    const tries =
      this.shards > 1
        ? [first, (first + 1 + Math.floor(this.random() * (this.shards - 1))) % this.shards]
        : [first];
    let key: ApiKey | undefined;
    let last: RateLimitState | undefined;
    let over = false;
    for (const shard of tries) {
      const share = shardLimit(this.limit, this.shards, shard);
      const counted: KeyCount | 'throttled' | null = await this.keys.authenticate(
        hash,
        window,
        at,
        shard,
        this.ofConsole,
      );
      if (counted === null) return { key: null };
      if (counted === 'throttled') {
        // The shard's item is taking more writes than it can: more this window would only add to them.
        over = true;
        last = refused(0, share);
        continue;
      }
      key = counted.key;
      last = decide(counted.count, this.limit, nowMs, WINDOW_MS, share);
      if (last.allowed) return { key, state: last };
      over ||= counted.count > share * MEMO_OVER;
    }
    if (over) this.remember(hash, window);
    return { key, state: last ?? refused(0, this.limit) };
  }

  private remember(hash: string, window: number) {
    if (this.refusedIn.size >= 10_000) this.refusedIn.clear();
    this.refusedIn.set(hash, window);
  }
}

/** A small seeded generator (mulberry32), so the model below is a pure function of its inputs. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface RefusalModel {
  /** The key's limit (requests per second). */
  limit: number;
  /** Offered rate as a fraction of the limit (0.9: 90 %). */
  load: number;
  /** One-second windows simulated. @default 200 */
  windows?: number;
  /** @default shardCount(limit) */
  shards?: number;
  /** Whether a request its shard refuses tries one other shard. @default true */
  retry?: boolean;
  /**
   * Function instances the requests are spread over at random, each remembering the keys it saw
   * refused far over a shard's share (MEMO_OVER) for the rest of the window, as KeyRateLimiter
   * does. @default none: no instance remembers (every request writes)
   */
  instances?: number;
  /** @default 1 */
  seed?: number;
}

/**
 * The fraction of a key's requests refused when they arrive as a Poisson process at `load` times
 * its limit, each counted on a shard picked at random (and, with `retry`, on one other shard when
 * that one refuses), as KeyRateLimiter does. With one shard it is the refusals a single counter
 * makes (the window's arrivals past the limit), the floor any design has. Also the writes per
 * request and the busiest shard's writes a second, which must stay well under 1,000.
 */
export function refusalModel(model: RefusalModel): {
  shards: number;
  offered: number;
  refused: number;
  refusedFraction: number;
  writesPerRequest: number;
  busiestShardWritesPerSecond: number;
} {
  const { limit, load, windows = 200, retry = true, seed = 1, instances } = model;
  const shards = model.shards ?? shardCount(limit);
  const random = seededRandom(seed);
  const shares = Array.from({ length: shards }, (_, k) => shardLimit(limit, shards, k));
  const counts = new Array<number>(shards);
  const remembers = new Array<boolean>(instances ?? 0);
  let offered = 0;
  let refused = 0;
  let writes = 0;
  let busiest = 0;
  for (let w = 0; w < windows; w++) {
    counts.fill(0);
    remembers.fill(false);
    // Poisson arrivals: exponential gaps at load × limit a second, within one second.
    for (
      let t = -Math.log(1 - random()) / (load * limit);
      t < 1;
      t += -Math.log(1 - random()) / (load * limit)
    ) {
      offered++;
      const instance = instances ? Math.floor(random() * instances) : -1;
      if (remembers[instance]) {
        refused++;
        continue;
      }
      const first = Math.floor(random() * shards);
      writes++;
      let count = ++(counts[first] as number);
      if (count <= (shares[first] as number)) continue;
      let share = shares[first] as number;
      let over = count > share * MEMO_OVER;
      if (retry && shards > 1) {
        const second = (first + 1 + Math.floor(random() * (shards - 1))) % shards;
        writes++;
        count = ++(counts[second] as number);
        share = shares[second] as number;
        if (count <= share) continue;
        over ||= count > share * MEMO_OVER;
      }
      if (over && instance >= 0) remembers[instance] = true;
      refused++;
    }
    busiest = Math.max(busiest, ...counts);
  }
  return {
    shards,
    offered,
    refused,
    refusedFraction: offered ? refused / offered : 0,
    writesPerRequest: offered ? writes / offered : 0,
    busiestShardWritesPerSecond: busiest,
  };
}
