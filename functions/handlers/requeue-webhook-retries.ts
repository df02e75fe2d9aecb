import type { Context } from 'aws-lambda';
import { backgroundHandler } from '../observability/middleware.js';
import { type TendHeldDeps, tendHeldMessages } from '../webhooks/held.js';
import {
  MAX_REQUEUED_PER_RUN,
  REQUEUE_MARGIN_MS,
  type RequeueRetriesDeps,
  requeueDueRetries,
} from '../webhooks/retries.js';
import { webhookRetryDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): puts the parked webhook retries that
 * fell due back on the delivery queue (webhooks/retries.ts), then tends the messages held by
 * paused endpoints (webhooks/held.ts), within its own time budget (REQUEUE_MARGIN_MS of its
 * timeout, and MAX_REQUEUED_PER_RUN), side by side; either's failure fails the run once both ended.
 */
export const makeHandler =
  (deps: RequeueRetriesDeps & TendHeldDeps) =>
  async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const timeLeft = context ? () => context.getRemainingTimeInMillis() : undefined;
    const [retries, held] = await Promise.allSettled([
      requeueDueRetries(deps, MAX_REQUEUED_PER_RUN, timeLeft),
      tendHeldMessages(deps, undefined, () => !!timeLeft && timeLeft() < REQUEUE_MARGIN_MS),
    ]);
    if (retries.status === 'rejected') throw retries.reason;
    if (held.status === 'rejected') throw held.reason;
    return { ...retries.value, held: held.value };
  };

export const handler = backgroundHandler(() => makeHandler(webhookRetryDeps()));
