import type { SQSClient } from '@aws-sdk/client-sqs';
import type { BroadcastLane } from '../../broadcasts/fan-out-ports.js';
import type { DueJob, SendJob } from '../../emails/ports.js';
import { SqsEmailQueue } from './email-queue.js';

/** How often the jobs SQS refused are sent again before the step fails (and is redone). */
const ATTEMPTS = 4;

/**
 * The broadcast lane (BROADCAST_SEND_QUEUE_URL): broadcast emails' send jobs, in SendMessageBatch
 * calls of 10 (the send queue's adapter, pointed at the lane), sending again what SQS refused
 * (a batch entry's failure, a call that failed) with a short backoff. What is still refused after
 * that throws: the fan-out's step fails and its page is redone, queueing them again.
 */
export class SqsBroadcastLane implements BroadcastLane {
  private readonly queue: SqsEmailQueue;

  constructor(
    sqs: SQSClient,
    queueUrl: string,
    private readonly pause: (ms: number) => Promise<unknown> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.queue = new SqsEmailQueue(sqs, queueUrl);
  }

  async enqueue(jobs: (SendJob | DueJob)[]): Promise<void> {
    let pending = jobs;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === ATTEMPTS)
        throw new Error(`the broadcast lane refused ${pending.length} jobs after ${ATTEMPTS} attempts`);
      if (attempt > 0) await this.pause(100 * 2 ** attempt);
      const refused = new Set(await this.queue.enqueueMany(pending));
      pending = pending.filter((job) => refused.has(job.id));
    }
  }
}
