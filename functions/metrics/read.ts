import type { DomainRepository } from '../domains/ports.js';
import { ApiError, validationError } from '../shared/errors.js';
import type { Clock } from '../shared/ports.js';
import {
  byBroadcast,
  type EmailMetricsBody,
  hoursOf,
  type KnownDomain,
  MetricsBehindError,
  metricsAnswer,
} from './model.js';
import type { BroadcastNames, MetricsReader } from './ports.js';
import { type EmailMetricsQueryInput, resolveMetricsQuery } from './query.js';

export interface EmailMetricsDeps {
  metrics: MetricsReader;
  domains: Pick<DomainRepository, 'get' | 'all'>;
  /** The broadcasts' names, for rows by broadcast and to check `broadcast_id` (absent: neither). */
  broadcasts?: BroadcastNames;
  clock: Clock;
}

/**
 * `GET /v1/emails/metrics`: the counts of the hours the range touches, summed into the answer
 * (metrics/model.ts). The domains are read only when the query names some (`domain_id`, each read
 * by id: an unknown id is a 400) or breaks the answer down by domain (every domain, for its id).
 * A query about broadcasts reads the counts kept by broadcast, and the broadcasts' names: those
 * filtered on (an unknown id is a 400), else those the counts name.
 */
export async function readEmailMetrics(
  deps: EmailMetricsDeps,
  input: EmailMetricsQueryInput,
): Promise<EmailMetricsBody> {
  const query = resolveMetricsQuery(input, deps.clock.now().getTime());
  const byName = new Map<string, KnownDomain>();
  let only: Set<string> | undefined;
  if (query.domainIds.length) {
    const found = await Promise.all(query.domainIds.map((id) => deps.domains.get(id)));
    const missing = query.domainIds.filter((_, i) => !found[i]);
    if (missing.length)
      throw validationError(`domain_id: no such domain: ${missing.join(', ')}`, [
        { field: 'domain_id', message: `no such domain: ${missing.join(', ')}` },
      ]);
    only = new Set();
    for (const domain of found)
      if (domain) {
        byName.set(domain.domain, { id: domain.id, name: domain.domain });
        only.add(domain.domain);
      }
  } else if (query.dimensions.includes('domain'))
    for await (const domain of deps.domains.all())
      byName.set(domain.domain, { id: domain.id, name: domain.domain });
  let names = new Map<string, string>();
  if (deps.broadcasts && query.broadcastIds.length) {
    names = await deps.broadcasts.names(query.broadcastIds);
    const missing = query.broadcastIds.filter((id) => !names.has(id));
    if (missing.length)
      throw validationError(`broadcast_id: no such broadcast: ${missing.join(', ')}`, [
        { field: 'broadcast_id', message: `no such broadcast: ${missing.join(', ')}` },
      ]);
  }
  const hours = hoursOf(query.startMs, query.endMs);
  const counts = await deps.metrics
    .hours(
      hours[0] as number,
      hours[hours.length - 1] as number,
      byBroadcast(query) ? (query.broadcastIds.length ? { ids: query.broadcastIds } : {}) : undefined,
    )
    .catch((error) => {
      // The roll-up is behind (the sweep stopped): a partial answer would read as fewer emails.
      if (error instanceof MetricsBehindError)
        throw new ApiError(
          503,
          'service_unavailable',
          `The metrics are catching up: ${error.hoursBehind} hours of the range are not rolled up yet (at most ${error.maxHours} are read as they are). Try again in a few minutes, or end the range earlier.`,
          undefined,
          { 'retry-after': '60' },
        );
      throw error;
    });
  if (deps.broadcasts && query.dimensions.includes('broadcast') && !query.broadcastIds.length) {
    const seen = [...new Set(counts.flatMap((h) => (h.broadcastId ? [h.broadcastId] : [])))];
    if (seen.length) names = await deps.broadcasts.names(seen);
  }
  return metricsAnswer(query, counts, byName, only, names);
}
