import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ImportQueue } from '../../contact-imports/ports.js';

/** The contact imports' queue (CONTACT_IMPORT_QUEUE_URL): one message a step, `{import_id}`. */
export class SqsContactImportQueue implements ImportQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(step: { import_id: string }): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(step) }),
    );
  }
}
