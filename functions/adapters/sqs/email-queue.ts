import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeadLetters, DeferredJob, DueJob, EmailQueue, SendJob } from '../../emails/ports.js';
import { parseSendJob, toQueueMessage } from '../../emails/send-job.js';

/** SQS's limit on a SendMessageBatch call's messages together, less a margin for the envelope. */
const BATCH_BYTES = 250 * 1024;

/** The send queue. The message carries the whole job, so the consumer reads nothing back from the table. */
export class SqsEmailQueue implements EmailQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(job: SendJob | DueJob | DeferredJob): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: toQueueMessage(job), ...delayOf(job) }),
    );
  }

  async enqueueMany(jobs: (SendJob | DueJob | DeferredJob)[]): Promise<string[]> {
    // SendMessageBatch takes 10 messages and 256 KiB a call; the calls go side by side.
    const batches: (SendJob | DueJob | DeferredJob)[][] = [];
    let current: (SendJob | DueJob | DeferredJob)[] = [];
    let bytes = 0;
    for (const job of jobs) {
      const size = Buffer.byteLength(toQueueMessage(job));
      if (current.length === 10 || (current.length && bytes + size > BATCH_BYTES)) {
        batches.push(current);
        current = [];
        bytes = 0;
      }
      current.push(job);
      bytes += size;
    }
    if (current.length) batches.push(current);
    const failed = await Promise.all(
      batches.map(async (batch) => {
        try {
          const { Failed = [] } = await this.sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: this.queueUrl,
              Entries: batch.map((job, i) => ({
                Id: String(i),
                MessageBody: toQueueMessage(job),
                ...delayOf(job),
              })),
            }),
          );
          return Failed.map((entry) => batch[Number(entry.Id)]?.id ?? '').filter(Boolean);
        } catch {
          return batch.map((job) => job.id);
        }
      }),
    );
    return failed.flat();
  }

  async backlog(): Promise<number> {
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesDelayed',
          'ApproximateNumberOfMessagesNotVisible',
        ],
      }),
    );
    // Waiting, delayed (deferred for SES's limits, or scheduled) or in a consumer's hands (waiting
    // for its slot at SES's rate): an email among them is not stranded.
    return (
      Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes?.ApproximateNumberOfMessagesDelayed ?? 0) +
      Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }
}

/**
 * A scheduled email's message is held by the queue until its time, a deferred one until its retry
 * (SQS's DelaySeconds, at most 900).
 */
const delayOf = (job: SendJob | DueJob | DeferredJob) =>
  'delaySeconds' in job && job.delaySeconds > 0 ? { DelaySeconds: Math.min(900, job.delaySeconds) } : {};

/** How long a dead letter stays hidden after the sweeper read it (SQS's maximum, 12 hours). */
export const DEAD_LETTER_HIDE_SECONDS = 12 * 60 * 60;

/**
 * The send queue's dead-letter queue, read by the sweeper. Messages are not deleted: they stay 14
 * days for operators to inspect. Each read hides them for 12 hours, so the queue's depth is its
 * visible and in-flight messages together (ApproximateNumberOfMessagesVisible alone drops to zero
 * within a minute of a message arriving).
 */
export class SqsDeadLetters implements DeadLetters {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async receive(max: number) {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: Math.min(10, Math.max(1, max)),
        WaitTimeSeconds: 0,
        VisibilityTimeout: DEAD_LETTER_HIDE_SECONDS,
      }),
    );
    return Messages.map((message) => {
      const job = parseSendJob(message.Body);
      return { messageId: message.MessageId ?? '', ...(job ? { job } : {}) };
    });
  }
}
