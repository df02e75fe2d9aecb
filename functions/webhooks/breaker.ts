/**
 * The circuit breaker of a webhook endpoint: what keeps one failing endpoint from holding the
 * others back. Its state lives on the endpoint's own item (which the delivery function reads
 * once a batch anyway), so it costs no extra read:
 *
 * - **closed**: messages are attempted. Each failed attempt adds its weight to `failures` (a
 *   timeout or any other attempt without an answer weighs NO_ANSWER_WEIGHT, a status 1), and a
 *   success sets it back to 0. At BREAKER_THRESHOLD the breaker opens.
 * - **open** (`paused_until` in the future): nothing is attempted. Its messages are held in the
 *   table (held.ts), their queue messages deleted, so a dead endpoint costs one write a message,
 *   no attempt and nothing in flight.
 * - **half open** (`paused_until` passed): one probe, claimed with a conditional write
 *   (`probe_at`), is attempted; the other messages are still held. Its success closes the
 *   breaker, and the requeue function puts the held messages back on the queue, oldest first; its
 *   failure opens it again for longer (pauseMs: 30 s, doubling each trip, at most 5 minutes).
 *
 * Beside the 3-day auto-disable: `failing_since` is kept as before and goes on running through
 * the pauses (held messages are not attempts, but nothing succeeded either), so an endpoint that
 * fails every probe for FAILING_DISABLES_AFTER_MS is disabled as before, and its held messages are
 * then marked failed.
 */
import { ATTEMPT_TIMEOUT_MS, type Webhook } from './model.js';

/** The weight of failures in a row that opens the breaker. */
export const BREAKER_THRESHOLD = 5;

/** What an attempt without any answer (a timeout, a refused connection) weighs: 3 of them open it. */
export const NO_ANSWER_WEIGHT = 2;

/** The first pause; each trip in a row doubles it, up to MAX_PAUSE_MS. */
export const FIRST_PAUSE_MS = 30_000;
export const MAX_PAUSE_MS = 5 * 60_000;

/** How long a claimed probe is the only one: past it (a crashed invocation), another may be claimed. */
export const PROBE_LEASE_MS = 3 * ATTEMPT_TIMEOUT_MS;

/** Most attempts to one endpoint at once within one invocation (model.ts: the stack sizes the timeout by it). */
export { ENDPOINT_SHARE } from './model.js';

export type BreakerState = Pick<Webhook, 'failures' | 'paused_until' | 'trips' | 'probe_at'>;

/** The weight of one failed attempt (its HTTP status, 0 when there was no answer). */
export const failureWeight = (status: number): number => (status === 0 ? NO_ANSWER_WEIGHT : 1);

/** The pause after trip number `trips` (1-based). */
export const pauseMs = (trips: number): number =>
  Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.max(0, trips - 1));

/**
 * What to do with a message for this endpoint now: `attempt` it (closed), `probe` (half open:
 * attempt it if the probe can be claimed, else hold it), or `hold` it (open, or a probe under way).
 */
export function breakerDecision(state: BreakerState, nowMs: number): 'attempt' | 'probe' | 'hold' {
  if (!state.paused_until) return 'attempt';
  if (Date.parse(state.paused_until) > nowMs) return 'hold';
  if (state.probe_at && Date.parse(state.probe_at) + PROBE_LEASE_MS > nowMs) return 'hold';
  return 'probe';
}

/** Whether a failure that left the state so opens the breaker (it is not open already). */
export const trips = (state: BreakerState, nowMs: number): boolean =>
  (state.failures ?? 0) >= BREAKER_THRESHOLD && breakerDecision(state, nowMs) === 'attempt';

/** Whether the breaker has anything to reset after a success. */
export const hasBreakerState = (state: BreakerState & Pick<Webhook, 'failing_since'>): boolean =>
  !!(state.failures || state.paused_until || state.trips || state.probe_at || state.failing_since);
