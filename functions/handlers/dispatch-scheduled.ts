import type { Context } from 'aws-lambda';
import { dispatchScheduled, type SchedulerDeps } from '../emails/scheduler.js';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { schedulerDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): queues the scheduled emails falling due,
 * and watches those due and queued for a lost message or an unknown outcome (emails/scheduler.ts).
 * A function of its own, so emails are queued on time whatever the sweeper's run takes, and with its
 * own time budget (SCHEDULER_TIME_MARGIN_MS of its timeout) and its own errors.
 */
export const makeHandler =
  (given: SchedulerDeps) => async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    // The webhook endpoints are read once a run, at its first event raised.
    const deps = readOncePerInvocation(given);
    const timeLeft = context ? () => context.getRemainingTimeInMillis() : undefined;
    const report = await dispatchScheduled(deps, { timeLeft });
    if (report.requeued + report.failedUnknownOutcome)
      log.warn('scheduler found stranded scheduled emails', { ...report });
    if (report.deferredPartitions)
      log.warn('scheduler left partitions of the due index to the next run (time)', { ...report });
    return report;
  };

export const handler = backgroundHandler(() => makeHandler(schedulerDeps()));
