import type { Clock, Counters, Log } from '../shared/ports.js';
import { breakerDecision } from './breaker.js';
import { type Delivery, RETRY_WINDOW_MS, type Webhook } from './model.js';
import type { DeliveryQueue, HeldMessage, WebhookBreakerRepository, WebhookHoldStore } from './ports.js';

/**
 * The messages an open breaker held (deliver-batch.ts), tended by the requeue function after its
 * parked retries (every minute on AWS, every second locally). It reads the endpoints once (one
 * Query of at most MAX_WEBHOOKS items) and tends those marked `held_at`:
 *
 * - **closed** (a probe succeeded): its held messages go back on the queue, oldest first, and are
 *   taken out of the table once there; then its mark is cleared, unless it was set again meanwhile.
 * - **half open with no probe under way** (its pause ended and no new event came): its oldest held
 *   message goes back on the queue, where the delivery function claims it as the probe.
 * - **open**: nothing goes back; only messages past the retry window are marked failed.
 * - **disabled** (by the user, or after failing for 3 days): every held message is marked failed.
 *
 * A held message older than RETRY_WINDOW_MS (the schedule's 27.6 hours) is marked failed, never
 * sent. A deleted endpoint is not listed: its held items expire (TTL) after the window and a day.
 */
export interface TendHeldDeps {
  webhooks: Pick<WebhookBreakerRepository, 'all' | 'recordAttempt' | 'clearHeld'>;
  held: WebhookHoldStore;
  queue: DeliveryQueue;
  clock: Clock;
  counters?: Counters;
  log?: Log;
}

/** Most held messages one run puts back or fails for one endpoint; the next run takes the rest. */
export const MAX_RELEASED_PER_RUN = 40_000;

export interface HeldReport {
  /** Put back on the queue (a probe included). */
  released: number;
  /** Marked failed (past the retry window, or their endpoint disabled). */
  failed: number;
}

export async function tendHeldMessages(
  deps: TendHeldDeps,
  limit = MAX_RELEASED_PER_RUN,
  outOfTime: () => boolean = () => false,
): Promise<HeldReport> {
  const report: HeldReport = { released: 0, failed: 0 };
  const marked = (await deps.webhooks.all()).filter((webhook) => webhook.held_at);
  await Promise.all(marked.map((webhook) => tend(deps, webhook, limit, outOfTime, report)));
  if (report.released) deps.counters?.count('WebhookMessagesReleased', report.released);
  if (report.failed) deps.counters?.count('WebhookMessagesFailed', report.failed);
  return report;
}

async function tend(
  deps: TendHeldDeps,
  webhook: Webhook,
  limit: number,
  outOfTime: () => boolean,
  report: HeldReport,
) {
  const now = deps.clock.now().getTime();
  const decision = webhook.status === 'enabled' ? breakerDecision(webhook, now) : 'fail';
  // Closed: all go back; disabled: all fail; half open: one goes back (the probe); open: only the expired fail.
  const mode = decision === 'attempt' ? 'release' : decision;
  let probeSent = false;
  let left = false;
  const partitions = deps.held.oldest(webhook.id, limit);
  const perPartition = Math.ceil(limit / partitions.length);
  await Promise.all(
    partitions.map(async (partition) => {
      let read = 0;
      for await (const page of partition) {
        read += page.length;
        const expired = page.filter(
          (h) => mode === 'fail' || !h.delivery || Date.parse(h.created_at) + RETRY_WINDOW_MS <= now,
        );
        const live = page.filter((h) => !expired.includes(h));
        await fail(deps, expired, report);
        let sent: HeldMessage[] = [];
        if (mode === 'release') sent = live;
        else if (mode === 'probe' && !probeSent && live[0]) {
          probeSent = true;
          sent = [live[0]];
        }
        if (sent.length) {
          await deps.queue.enqueue(sent.map((h) => h.delivery as Delivery));
          report.released += sent.length;
        }
        await deps.held.remove([...expired, ...sent]);
        // Oldest first: past a message still within the window, the rest of an open one's are too.
        if (sent.length < live.length) {
          left = true;
          break;
        }
        if (outOfTime() || read >= perPartition) {
          left = true;
          break;
        }
      }
    }),
  );
  // Everything read was taken out: unless another was held since the mark was read, none is left.
  if (!left && (mode === 'release' || mode === 'fail') && webhook.held_at)
    await deps.webhooks.clearHeld(webhook.id, webhook.held_at);
}

/** Marks them failed: their message's state, as the last failed attempt leaves it. */
async function fail(deps: TendHeldDeps, held: HeldMessage[], report: HeldReport) {
  await Promise.all(
    held.map(async ({ delivery }) => {
      if (!delivery) return;
      await deps.webhooks.recordAttempt({
        id: delivery.message_id,
        webhook_id: delivery.webhook_id,
        type: delivery.type,
        created_at: delivery.created_at,
        status: 'failed',
        next_attempt_at: null,
        attempts: delivery.attempts_made ?? 0,
        body: delivery.body,
      });
    }),
  );
  report.failed += held.filter((h) => h.delivery).length;
  for (const h of held.filter((h) => !h.delivery))
    deps.log?.error('a held webhook message is unreadable; dropped', { message_id: h.message_id });
}
