import { BROADCAST_CANCELED_REASON } from './broadcast-lane.js';
import type { DeliverDeps, DeliverOutcome } from './deliver-deps.js';
import { endEmail } from './end.js';
import type { SendJob } from './ports.js';

/**
 * Cancel stops every email of a broadcast not yet handed to SES: an email whose broadcast is
 * canceled ends unsent (`failed`, marked canceled, `failure_reason` saying why) instead of being
 * claimed. Asked before its slot is booked and again just before its claim (the answer is cached
 * about a second: the adapter's), so a cancel reaches the emails already booked too. An email the
 * claim already took is SES's: a cancel cannot call it back. Undefined: it may go on.
 */
export async function endIfCanceled(deps: DeliverDeps, job: SendJob): Promise<DeliverOutcome | undefined> {
  const broadcastId = job.content.broadcast_id;
  if (!broadcastId || !deps.broadcastStates) return undefined;
  if (!(await deps.broadcastStates.canceled(broadcastId))) return undefined;
  const ended = await endEmail(deps, job.id, {
    ending: 'broadcastCanceled',
    at: deps.clock.now().toISOString(),
    reason: BROADCAST_CANCELED_REASON,
    email: job.content,
    write: { canceled: true },
  });
  if (!ended) return { result: 'skipped', why: 'done' };
  return { result: 'canceled', reason: BROADCAST_CANCELED_REASON };
}
