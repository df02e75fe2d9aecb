import type { HourCounts, MetricCounts } from './model.js';

/**
 * Counts for the email metrics (metrics/model.ts): adds these counts to the sender domain's counter
 * of the current hour. Called right after the write that recorded what it counts for the first time.
 * `broadcastId`: the email was fanned out from this broadcast, whose counts are kept too (for
 * `dimensions=broadcast` and the `broadcast_id` filter, issue 41).
 */
export interface MetricsCounter {
  count(domain: string, counts: MetricCounts, spreadBy: string, broadcastId?: string): Promise<void>;
}

/** Reads the email metrics' counts, by UTC hour and sender domain (metrics/model.ts). */
export interface MetricsReader {
  /**
   * Every sender domain's counts in the UTC hours from `fromHourMs` to `toHourMs` (both included),
   * of all its emails; or, with `byBroadcast`, of its broadcast emails by broadcast (each with its
   * `broadcastId`; only those of `byBroadcast.ids` when given).
   */
  hours(
    fromHourMs: number,
    toHourMs: number,
    byBroadcast?: { ids?: readonly string[] },
  ): Promise<HourCounts[]>;
}

/** The names of broadcasts, by id (those that no longer exist are left out): the answer's `broadcast_name`. */
export interface BroadcastNames {
  names(ids: readonly string[]): Promise<Map<string, string>>;
}

/** Folds finished hours' sharded counters into per-day items, so a read costs few items. */
export interface MetricsRollUp {
  rollUp(nowMs: number): Promise<{ hours: number }>;
}
