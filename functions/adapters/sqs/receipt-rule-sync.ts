import { randomUUID } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ReceiptRuleSync } from '../../domains/ports.js';

/** The one message group of the receipt-rule queue: FIFO within it, so one writer at a time. */
export const RECEIPT_RULES_GROUP = 'rules';

/**
 * Asks the receipt-rule writer (`sync-receipt-rules`) to bring SES's receipt rules to the domains:
 * one message on its FIFO queue (RECEIPT_RULES_QUEUE_URL), all in one message group, so SQS hands
 * them to one invocation at a time. Each message means "bring the rules to the domains as stored
 * now", so none is ever deduplicated away (a random deduplication id): a request made after a
 * change must run after it.
 */
export class SqsReceiptRuleSync implements ReceiptRuleSync {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async request(reason: string): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify({ reason }),
        MessageGroupId: RECEIPT_RULES_GROUP,
        MessageDeduplicationId: randomUUID(),
      }),
    );
  }
}
