import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeadLetters, EmailQueue, SendJob } from '../../core/ports.js';
import { parseSendJob } from '../../core/send-job.js';

/** The send queue. The message carries the whole job, so the consumer reads nothing back from the table. */
export class SqsEmailQueue implements EmailQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(job: SendJob): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(job) }),
    );
  }

  async backlog(): Promise<number> {
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    return (
      Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes?.ApproximateNumberOfMessagesDelayed ?? 0)
    );
  }
}

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
