import { type SweepDeps, sweep } from '../core/use-cases/sweep.js';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { sweepDeps } from '../wiring.js';

/**
 * Runs on a schedule (EventBridge every minute on AWS, a timer locally): puts stranded emails back
 * on the queue and settles those whose outcome will never come (see core/use-cases/sweep.ts).
 */
export const makeHandler = (deps: SweepDeps) => async () => {
  const report = await sweep(deps);
  const acted =
    report.requeued +
    report.deferred +
    report.failedFromDeadLetters +
    report.failedUnknownOutcome +
    report.failedNoFinalEvent;
  if (acted) log.warn('sweep found stranded emails', { ...report });
  return report;
};

export const handler = backgroundHandler(() => makeHandler(sweepDeps()));
