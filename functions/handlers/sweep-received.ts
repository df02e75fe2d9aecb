import type { Context } from 'aws-lambda';
import { backgroundHandler } from '../observability/middleware.js';
import { type SweepReceivedDeps, sweepReceived } from '../receiving/sweep.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { sweepReceivedDeps } from '../wiring/receiving.js';

/**
 * Runs every 5 minutes: receives what receive-email missed, from its failure destination and from
 * raw messages that never became a received email (receiving/sweep.ts), while the invocation has
 * time left.
 */
export const makeHandler =
  (given: SweepReceivedDeps) =>
  async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) =>
    sweepReceived(
      readOncePerInvocation({
        ...given,
        ...(context ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {}),
      }),
    );

export const handler = backgroundHandler(() => makeHandler(sweepReceivedDeps()));
