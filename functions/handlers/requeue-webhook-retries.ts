import type { Context } from 'aws-lambda';
import { backgroundHandler } from '../observability/middleware.js';
import { type RepublishDeps, republishKept } from '../webhooks/republish.js';
import { MAX_REQUEUED_PER_RUN, type RequeueRetriesDeps, requeueDueRetries } from '../webhooks/retries.js';
import { webhookRetryDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): puts the parked webhook retries that
 * fell due back on the delivery queue (webhooks/retries.ts), within its own time budget
 * (REQUEUE_MARGIN_MS of its timeout, and MAX_REQUEUED_PER_RUN); beside them, publishes the events
 * kept because they could not be published when raised (webhooks/republish.ts).
 */
export const makeHandler =
  (deps: RequeueRetriesDeps & { republish?: RepublishDeps }) =>
  async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const timeLeft = context ? () => context.getRemainingTimeInMillis() : undefined;
    const [report] = await Promise.all([
      requeueDueRetries(deps, MAX_REQUEUED_PER_RUN, timeLeft),
      deps.republish && republishKept(deps.republish, timeLeft),
    ]);
    return report;
  };

export const handler = backgroundHandler(() => makeHandler(webhookRetryDeps()));
