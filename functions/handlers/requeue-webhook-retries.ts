import type { Context } from 'aws-lambda';
import { backgroundHandler } from '../observability/middleware.js';
import { MAX_REQUEUED_PER_RUN, type RequeueRetriesDeps, requeueDueRetries } from '../webhooks/retries.js';
import { webhookRetryDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): puts the parked webhook retries that
 * fell due back on the delivery queue (webhooks/retries.ts), within its own time budget
 * (REQUEUE_MARGIN_MS of its timeout, and MAX_REQUEUED_PER_RUN).
 */
export const makeHandler =
  (deps: RequeueRetriesDeps) =>
  async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) =>
    requeueDueRetries(
      deps,
      MAX_REQUEUED_PER_RUN,
      context ? () => context.getRemainingTimeInMillis() : undefined,
    );

export const handler = backgroundHandler(() => makeHandler(webhookRetryDeps()));
