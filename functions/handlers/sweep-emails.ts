import type { Context } from 'aws-lambda';
import { dispatchScheduled } from '../emails/scheduler.js';
import { type SweepDeps, sweep } from '../emails/sweep.js';
import type { MetricsRollUp } from '../metrics/ports.js';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { MAX_REQUEUED_PER_RUN, type RequeueRetriesDeps, requeueDueRetries } from '../webhooks/retries.js';
import { sweepRunDeps } from '../wiring.js';

/**
 * Runs on a schedule (EventBridge every minute on AWS, a timer locally): queues the scheduled emails
 * falling due (emails/scheduler.ts), puts stranded emails back on the queue and settles those
 * whose outcome will never come (emails/sweep.ts); puts parked webhook retries that fell
 * due back on the delivery queue (webhooks/retries.ts); rolls the email metrics'
 * finished hours up into day items (adapters/dynamodb/metrics-store.ts).
 */
export const makeHandler =
  (given: SweepDeps & { webhookRetries?: RequeueRetriesDeps; metricsRollUp?: MetricsRollUp }) =>
  async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    // The webhook endpoints are read once a run, at its first event raised.
    const deps = readOncePerInvocation(given);
    // Scheduled emails first: queued on time even should the sweep below run long. Each part runs
    // whatever the other does (a throttled due index must not stop dead letters being failed); the
    // run fails afterwards if either did, so the error is counted and alarmed on.
    let failure: unknown;
    // Bounded by the invocation's time left too (webhook-retries.ts, REQUEUE_MARGIN_MS).
    const timeLeft = context ? () => context.getRemainingTimeInMillis() : undefined;
    const scheduled = await dispatchScheduled(deps, { timeLeft }).catch((error) => {
      log.error('scheduler run failed; the sweep goes on', { error });
      failure = error;
      return undefined;
    });
    if (scheduled && scheduled.requeued + scheduled.failedUnknownOutcome)
      log.warn('scheduler found stranded scheduled emails', { ...scheduled });
    if (scheduled?.deferredPartitions)
      log.warn('scheduler left partitions of the due index to the next run (time)', { ...scheduled });
    const webhookRetries = await (
      deps.webhookRetries && requeueDueRetries(deps.webhookRetries, MAX_REQUEUED_PER_RUN, timeLeft)
    )?.catch((error) => {
      log.error('webhook retry run failed; the sweep goes on', { error });
      failure ??= error;
      return undefined;
    });
    const metrics = await deps.metricsRollUp?.rollUp(deps.clock.now().getTime()).catch((error) => {
      log.error('metrics roll-up failed; the sweep goes on', { error });
      failure ??= error;
      return undefined;
    });
    const report = await sweep(deps).catch((error) => {
      log.error('sweep run failed', { error });
      failure ??= error;
      return undefined;
    });
    if (failure) throw failure;
    if (!report) throw new Error('sweep run failed');
    const acted =
      report.requeued +
      report.deferred +
      report.failedFromDeadLetters +
      report.failedUnknownOutcome +
      report.failedNoFinalEvent;
    if (acted) log.warn('sweep found stranded emails', { ...report });
    return { ...report, scheduled, webhookRetries, metricsRolledHours: metrics?.hours };
  };

export const handler = backgroundHandler(() => makeHandler(sweepRunDeps()));
