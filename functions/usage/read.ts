import type { DomainRepository } from '../domains/ports.js';
import { MetricsBehindError } from '../metrics/model.js';
import type { MetricsReader } from '../metrics/ports.js';
import { ApiError } from '../shared/errors.js';
import type { SendQuotaStore } from '../shared/pacing.js';
import type { Clock } from '../shared/ports.js';
import { HOUR_MS, monthStartMs, type UsageBody, usageAnswer } from './model.js';

export interface UsageDeps {
  /** The account's SES limits as stored (read only: the send consumers keep them). */
  quota: Pick<SendQuotaStore, 'get'>;
  metrics: MetricsReader;
  domains: Pick<DomainRepository, 'all'>;
  clock: Clock;
  ratePerSecond: number;
}

/**
 * `GET /v1/usage`: the stored account limits, the counters of this UTC month's hours (the last 24
 * of them for `daily`), the domains counted. One read of each; no call to SES.
 */
export async function readUsage(deps: UsageDeps): Promise<UsageBody> {
  const nowMs = deps.clock.now().getTime();
  const hourMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const dayFrom = hourMs - 23 * HOUR_MS;
  const from = Math.min(dayFrom, monthStartMs(nowMs));
  const [stored, hours, domains] = await Promise.all([
    deps.quota.get(),
    deps.metrics.hours(from, hourMs).catch((error) => {
      if (error instanceof MetricsBehindError)
        throw new ApiError(
          503,
          'service_unavailable',
          `The counters are catching up: ${error.hoursBehind} hours are not rolled up yet. Try again in a few minutes.`,
          undefined,
          { 'retry-after': '60' },
        );
      throw error;
    }),
    (async () => {
      let count = 0;
      for await (const _ of deps.domains.all()) count++;
      return count;
    })(),
  ]);
  const day = { sent: 0, received: 0 };
  const month = { sent: 0, received: 0 };
  const monthFrom = monthStartMs(nowMs);
  for (const h of hours) {
    const sent = h.counts.sent ?? 0;
    const received = h.counts.received ?? 0;
    if (h.hourMs >= dayFrom) {
      day.sent += sent;
      day.received += received;
    }
    if (h.hourMs >= monthFrom) {
      month.sent += sent;
      month.received += received;
    }
  }
  return usageAnswer({
    nowMs,
    ...(stored.quota && stored.readAt !== undefined
      ? { account: { quota: stored.quota, readAtMs: stored.readAt } }
      : {}),
    day,
    month,
    domains,
    ratePerSecond: deps.ratePerSecond,
  });
}
