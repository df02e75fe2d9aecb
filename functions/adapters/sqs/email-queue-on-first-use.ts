import type { EmailQueue } from '../../emails/ports.js';
import { onFirstUse } from '../on-first-use.js';

/**
 * The send queue (SQS), built on first use: for PATCH /v1/emails/{id}, which queues an email only
 * when its new time is due within the queue's longest delay.
 */
export function emailQueueOnFirstUse(queueUrl: string): EmailQueue {
  const queue = onFirstUse(async () => (await import('./email-queue-island.js')).createEmailQueue(queueUrl));
  return {
    enqueue: async (job) => (await queue()).enqueue(job),
    enqueueMany: async (jobs) => (await queue()).enqueueMany(jobs),
    backlog: async () => (await queue()).backlog(),
  };
}
