import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { EmailQueue, SendJob } from '../../core/ports.js';

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
}
