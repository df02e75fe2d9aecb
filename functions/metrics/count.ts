import type { Counters, Log } from '../shared/ports.js';
import { type MetricCounts, senderDomainOf } from './model.js';
import type { MetricsCounter } from './ports.js';

export interface CountMetricsDeps {
  /** Where the email metrics are counted (absent: nothing is). */
  metrics?: MetricsCounter;
  counters?: Counters;
  log?: Log;
}

/**
 * Adds to the email metrics what a write just recorded for the first time, under the sender's
 * domain (metrics/model.ts). Called right after that write, never before: a repeated event finds it
 * recorded and counts nothing. Never throws: the email's own record is made and must go on (its
 * webhooks, the send's answer). A count lost here (the counter write failed after the record was
 * made; the retried event then finds nothing new) is counted as MetricCountsLost and logged.
 */
export async function countMetrics(
  deps: CountMetricsDeps,
  from: string | undefined,
  counts: MetricCounts,
  spreadBy: string,
  /** The broadcast the email was fanned out from: its counts are also kept by broadcast (issue 41). */
  broadcastId?: string,
): Promise<void> {
  const { metrics } = deps;
  if (!metrics) return;
  const news = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0)) as MetricCounts;
  if (Object.keys(news).length === 0) return;
  try {
    await metrics.count(senderDomainOf(from) ?? 'unknown', news, spreadBy, broadcastId);
  } catch (error) {
    deps.counters?.count('MetricCountsLost');
    deps.log?.error('could not count email metrics; these counts are lost', {
      email_id: spreadBy,
      counts: news,
      error,
    });
  }
}

/** 1 when it happened, 0 when not. */
export const one = (happened: boolean) => (happened ? 1 : 0);
