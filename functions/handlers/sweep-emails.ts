import { dispatchScheduled } from '../core/use-cases/schedule.js';
import { type SweepDeps, sweep } from '../core/use-cases/sweep.js';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { sweepDeps } from '../wiring.js';

/**
 * Runs on a schedule (EventBridge every minute on AWS, a timer locally): queues the scheduled emails
 * falling due (core/use-cases/schedule.ts), puts stranded emails back on the queue and settles those
 * whose outcome will never come (core/use-cases/sweep.ts).
 */
export const makeHandler = (deps: SweepDeps) => async () => {
  // Scheduled emails first: queued on time even should the sweep below run long.
  const scheduled = await dispatchScheduled(deps);
  if (scheduled.requeued + scheduled.failedUnknownOutcome)
    log.warn('scheduler found stranded scheduled emails', { ...scheduled });
  const report = await sweep(deps);
  const acted =
    report.requeued +
    report.deferred +
    report.failedFromDeadLetters +
    report.failedUnknownOutcome +
    report.failedNoFinalEvent;
  if (acted) log.warn('sweep found stranded emails', { ...report });
  return { ...report, scheduled };
};

export const handler = backgroundHandler(() => makeHandler(sweepDeps()));
