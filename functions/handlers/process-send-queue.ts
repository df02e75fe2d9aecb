import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { EmailQueue } from '../core/ports.js';
import { delaySecondsUntil, MAX_QUEUE_DELAY_SECONDS } from '../core/schedule.js';
import { parseSendJob } from '../core/send-job.js';
import { type DeliverDeps, deliverEmail } from '../core/use-cases/deliver-email.js';
import { logFor, logger } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { partialBatch } from '../sqs-batch.js';
import { consumerDeps } from '../wiring.js';

export interface ConsumerDeps extends DeliverDeps {
  /** The queue's maxReceiveCount: on that attempt a failure is final (the message goes to the DLQ). */
  maxReceiveCount: number;
  /** The send queue itself: a scheduled email's message that came before its time goes back, delayed. */
  queue?: Pick<EmailQueue, 'enqueue'>;
}

/**
 * The send queue's consumer: delivers each message's email through the mailer and reports the
 * messages to retry individually (partial batch response), so one failure never resends the others.
 */
export const makeHandler =
  (deps: ConsumerDeps) =>
  (event: SQSEvent): Promise<SQSBatchResponse> =>
    partialBatch(event, (record) => processRecord(deps, record));

/** Returns true when the message is done with (delete it), false to have it redelivered. */
async function processRecord(deps: ConsumerDeps, record: SQSRecord): Promise<boolean> {
  const attempt = Number(record.attributes.ApproximateReceiveCount ?? '1');
  const job = parseSendJob(record.body);
  if (!job) {
    // Not ours or corrupt: nothing to mark; it reaches the dead-letter queue after maxReceiveCount.
    logger.error('unreadable send job', { messageId: record.messageId, attempt });
    return false;
  }
  // Every line about this message names its email (records of a batch run side by side).
  const log = logFor(job.id);
  try {
    const outcome = await deliverEmail({ ...deps, log }, job, attempt >= deps.maxReceiveCount);
    (outcome.result === 'unknown' ? log.warn : log.info)('send job', { attempt, ...outcome });
    if (outcome.result === 'not_due') {
      // Due within the queue's longest delay: back on the queue until then. Later than that, it
      // was moved, and the scheduler queues it when it falls due (see core/use-cases/schedule.ts).
      const delaySeconds = delaySecondsUntil(Date.parse(outcome.dueAt), deps.clock.now().getTime());
      if (deps.queue && delaySeconds < MAX_QUEUE_DELAY_SECONDS)
        await deps.queue.enqueue({
          id: job.id,
          content: null,
          ...(job.key_id ? { key_id: job.key_id } : {}),
          delaySeconds,
        });
      return true;
    }
    // Kept only to be retried, or (given up on) to reach the dead-letter queue for inspection.
    // An unknown outcome is deleted: trying again could send it twice.
    return !(outcome.result === 'retry' || (outcome.result === 'failed' && outcome.gaveUp));
  } catch (error) {
    // The table failed (the claim, most likely): retried; on the last attempt the message goes to
    // the dead-letter queue, and the sweeper ends the email failed if no attempt ever began.
    log.error('send job failed', { attempt, error });
    return false;
  }
}

export const handler = backgroundHandler(() => makeHandler(consumerDeps()));
