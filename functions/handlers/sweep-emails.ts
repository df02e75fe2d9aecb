import type { Context } from 'aws-lambda';
import { type SweepDeps, sweep } from '../emails/sweep.js';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { sweepDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): fails the emails whose send message
 * reached the dead-letter queue, puts stranded emails back on the queue and settles those whose
 * outcome will never come (emails/sweep.ts). The scheduled emails, the parked webhook retries and
 * the metrics' roll-up are functions of their own (dispatch-scheduled, requeue-webhook-retries,
 * roll-up-metrics), each with its own time and errors. The scan reads page after page while the
 * invocation has time left (SWEEP_MARGIN_MS), so its pass grows with the backlog.
 */
export const makeHandler =
  (given: SweepDeps) => async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    // The webhook endpoints are read once a run, at its first event raised.
    const report = await sweep(
      readOncePerInvocation({
        ...given,
        ...(context ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {}),
      }),
    );
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
