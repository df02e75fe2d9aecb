import { ApiError } from './errors.js';

/**
 * Per-key rate limiting with a fixed one-second window: every request of a key in the same second
 * adds one to that second's counter (one small write, no read: the write returns the new count),
 * and a count over the limit is refused. All function instances share the counter, so the limit
 * holds however many instances run.
 */
export const WINDOW_MS = 1000;
export const DEFAULT_RATE_LIMIT = 10;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the count starts again (at least 1). */
  resetSeconds: number;
  allowed: boolean;
}

export const windowOf = (nowMs: number, windowMs = WINDOW_MS) => Math.floor(nowMs / windowMs);

/** The decision for the `count`-th request of a window, at `nowMs`. */
export function decide(count: number, limit: number, nowMs: number, windowMs = WINDOW_MS): RateLimitState {
  const windowEndMs = (windowOf(nowMs, windowMs) + 1) * windowMs;
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((windowEndMs - nowMs) / 1000)),
    allowed: count <= limit,
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
