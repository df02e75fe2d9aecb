import type { MetricsRollUp } from '../metrics/ports.js';
import { backgroundHandler } from '../observability/middleware.js';
import type { Clock } from '../shared/ports.js';
import { metricsRollUpDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): rolls the email metrics' finished hours
 * up into day items (adapters/dynamodb/metrics-store.ts), so that a read of a long range costs few
 * items. At most MAX_ROLLED_PER_RUN hours a run; the next run goes on.
 */
export const makeHandler = (deps: { metrics: MetricsRollUp; clock: Clock }) => async () => {
  const { hours } = await deps.metrics.rollUp(deps.clock.now().getTime());
  return { metricsRolledHours: hours };
};

export const handler = backgroundHandler(() => makeHandler(metricsRollUpDeps()));
