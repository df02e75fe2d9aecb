import type { Clock, Counters, Log } from '../shared/ports.js';
import { type Delivery, retryWaitsIn } from './model.js';
import type { DeliveryQueue, ParkedRetry, WebhookRetryStore } from './ports.js';

/**
 * Where a webhook retry waits. No retry keeps its message in flight: a short one (5 s, 5 min: up
 * to MAX_QUEUE_WAIT_SECONDS) is a new message sent with that delay; a longer one (30 min to 10 h)
 * is parked in the table, due by time. Either way the received message is then deleted: a hidden
 * message counts against SQS's in-flight limit (about 120,000 on a standard queue), which one dead
 * endpoint would fill, stalling delivery to every endpoint, while a delayed message does not. The
 * requeue-webhook-retries function (every minute on AWS, every second locally) puts the parked
 * retries that fell due back on the queue as new messages, carrying the attempts made so far, so a
 * retry is at most a run late.
 *
 * Never lost: a retry is sent or parked before its message is deleted, and taken out of the table
 * only after its new message is on the queue. A step that fails in between makes a duplicate
 * attempt (the same `webhook-id`, which receivers deduplicate on), never a missing one; a retry
 * that can be neither sent nor parked leaves its message to come back after the queue's
 * visibility timeout (an attempt early).
 */

export interface RetryLaterDeps {
  retries: Pick<WebhookRetryStore, 'park'>;
  queue: DeliveryQueue;
  counters?: Counters;
  log?: Log;
}

/**
 * Keeps a failed attempt's retry until it is due: `queue` when it was sent as a delayed message,
 * `table` when it is parked. Either way its received message may be deleted now; throws when
 * neither could be done (the message is then kept, to come back).
 */
export async function retryLater(
  deps: RetryLaterDeps,
  delivery: Delivery,
  attempt: number,
  retry: { delaySeconds: number; nextAttemptAt: string },
): Promise<'queue' | 'table'> {
  const next: Delivery = { ...delivery, attempts_made: attempt };
  if (retryWaitsIn(retry.delaySeconds) === 'queue') {
    await deps.queue.enqueue([next], retry.delaySeconds);
    return 'queue';
  }
  await deps.retries.park({ due_at: retry.nextAttemptAt, message_id: delivery.message_id, delivery: next });
  deps.counters?.count('WebhookRetriesParked');
  return 'table';
}

export interface RequeueRetriesDeps {
  retries: WebhookRetryStore;
  queue: DeliveryQueue;
  clock: Clock;
  counters?: Counters;
  log?: Log;
}

/**
 * How much one run re-queues. The store's partitions (8) are read side by side, 100 a page, each
 * page's ten SendMessageBatch and four BatchWriteItem deletes side by side: about 60 ms a page, but
 * a partition takes 1,000 deletes a second, so about 8,000 retries a second while the run lasts,
 * the rate they can be parked at. A run stops taking pages REQUEUE_MARGIN_MS before its
 * invocation's end (its function's timeout is 60 s: the pages under way finish within the margin),
 * and after MAX_REQUEUED_PER_RUN (30,000 a partition: 30 s of its deletes). So a run re-queues up to about 240,000 (4,000 a second over the minute between runs),
 * where it took 10,000 before. What is left is due still, and the next run takes it.
 */
export const MAX_REQUEUED_PER_RUN = 240_000;
export const REQUEUE_MARGIN_MS = 25_000;

export interface RequeueReport {
  /** Put back on the queue and taken out of the table. */
  requeued: number;
  /** Left parked because the queue refused them: the next run tries again. */
  refused: number;
  /** Parked items that were not a message (taken out, and logged). */
  unreadable: number;
}

/**
 * Puts the parked retries that are due back on the delivery queue (ten a SendMessageBatch), then
 * takes them out of the table, the store's partitions side by side. `timeLeftMs`: the invocation's
 * time left; a partition's reader takes no further page once it is under REQUEUE_MARGIN_MS (absent:
 * bounded by `limit` only). Throws after the run when the queue refused some, so the run counts as
 * failed (and is alarmed on); they stay parked for the next.
 */
export async function requeueDueRetries(
  deps: RequeueRetriesDeps,
  limit = MAX_REQUEUED_PER_RUN,
  timeLeftMs?: () => number,
): Promise<RequeueReport> {
  const report: RequeueReport = { requeued: 0, refused: 0, unreadable: 0 };
  const until = deps.clock.now().toISOString();
  let refusal: unknown;
  const handle = async (page: ParkedRetry[]) => {
    const unreadable = page.filter((retry) => !retry.delivery);
    for (const retry of unreadable)
      deps.log?.error('a parked webhook retry is unreadable; dropped', { message_id: retry.message_id });
    const readable = page.filter((retry): retry is ParkedRetry & { delivery: Delivery } => !!retry.delivery);
    const chunks: (typeof readable)[] = [];
    for (let i = 0; i < readable.length; i += 10) chunks.push(readable.slice(i, i + 10));
    const queued = await Promise.all(
      chunks.map(async (chunk) => {
        try {
          await deps.queue.enqueue(chunk.map((retry) => retry.delivery));
          return chunk;
        } catch (error) {
          refusal ??= error;
          report.refused += chunk.length;
          return [];
        }
      }),
    );
    const done = [...unreadable, ...queued.flat()];
    if (done.length) await deps.retries.remove(done);
    report.requeued += done.length - unreadable.length;
    report.unreadable += unreadable.length;
  };
  const outOfTime = () => timeLeftMs !== undefined && timeLeftMs() < REQUEUE_MARGIN_MS;
  await Promise.all(
    deps.retries.dueByPartition(until, limit).map(async (partition) => {
      if (outOfTime()) return;
      for await (const page of partition) {
        await handle(page);
        if (outOfTime()) break;
      }
    }),
  );
  if (report.requeued) deps.counters?.count('WebhookRetriesRequeued', report.requeued);
  if (refusal)
    throw new Error(`the webhook queue refused ${report.refused} due retries; they stay parked`, {
      cause: refusal,
    });
  return report;
}
