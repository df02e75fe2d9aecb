import type { Context } from 'aws-lambda';
import { backgroundHandler } from '../observability/middleware.js';
import { type TendHeldDeps, tendHeldMessages } from '../webhooks/held.js';
import { type RepublishDeps, republishKept } from '../webhooks/republish.js';
import {
  MAX_REQUEUED_PER_RUN,
  REQUEUE_MARGIN_MS,
  type RequeueRetriesDeps,
  requeueDueRetries,
} from '../webhooks/retries.js';
import { webhookRetryDeps } from '../wiring.js';

/**
 * Runs every minute (EventBridge on AWS, a timer locally): puts the parked webhook retries that
 * fell due back on the delivery queue (webhooks/retries.ts), tends the messages held by paused
 * endpoints (webhooks/held.ts), and publishes the events kept because they could not be published
 * when raised (webhooks/republish.ts), side by side, within its own time budget (REQUEUE_MARGIN_MS
 * of its timeout, and MAX_REQUEUED_PER_RUN); any one's failure fails the run once all ended.
 */
export const makeHandler =
  (deps: RequeueRetriesDeps & TendHeldDeps & { republish?: RepublishDeps }) =>
  async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const timeLeft = context ? () => context.getRemainingTimeInMillis() : undefined;
    const [retries, held, republished] = await Promise.allSettled([
      requeueDueRetries(deps, MAX_REQUEUED_PER_RUN, timeLeft),
      tendHeldMessages(deps, undefined, () => !!timeLeft && timeLeft() < REQUEUE_MARGIN_MS),
      deps.republish && republishKept(deps.republish, timeLeft),
    ]);
    for (const part of [retries, held, republished]) if (part.status === 'rejected') throw part.reason;
    if (retries.status !== 'fulfilled' || held.status !== 'fulfilled') throw new Error('unreachable');
    return { ...retries.value, held: held.value };
  };

export const handler = backgroundHandler(() => makeHandler(webhookRetryDeps()));
