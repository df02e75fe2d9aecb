import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { AudienceCleanup, CleanupJob } from '../../contacts/cleanup-jobs.js';

/**
 * How long a new clean-up job waits on the queue before it runs: the listing indexes are
 * eventually consistent, so a membership or choice written just before its segment, topic or
 * contact was deleted (a request racing the deletion) is in the index by then and is cleaned up
 * too. A job that carries on (`shard` or `cursor` set) runs at once.
 */
export const CLEANUP_SETTLE_SECONDS = 10;

/**
 * Hands audience clean-up jobs (contacts/cleanup-jobs.ts) to the `clean-up-audience` worker: one
 * message each on AUDIENCE_CLEANUP_QUEUE_URL, a standard queue (a FIFO queue takes no per-message
 * delay). A job is idempotent, so a message delivered twice deletes nothing twice.
 */
export class SqsAudienceCleanup implements AudienceCleanup {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly settleSeconds = CLEANUP_SETTLE_SECONDS,
  ) {}

  async enqueue(job: CleanupJob): Promise<void> {
    const carriesOn = job.cursor !== undefined || ('shard' in job && job.shard !== undefined);
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(job),
        DelaySeconds: carriesOn ? 0 : this.settleSeconds,
      }),
    );
  }
}
