import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Delivery } from '../../webhooks/model.js';
import type { DeliveryQueue } from '../../webhooks/ports.js';

/** SQS's limit on a SendMessageBatch call's messages together, less a margin for the envelope. */
const BATCH_BYTES = 250 * 1024;

/** SQS's longest visibility timeout: the longest wait between two attempts it can keep. */
export const MAX_VISIBILITY_SECONDS = 12 * 3600;

/**
 * The webhook delivery queue: one message per (event, endpoint), ten to a SendMessageBatch call.
 * A short retry waits here: a failed attempt's message is hidden for the retry's delay
 * (ChangeMessageVisibility) and handed back to the delivery function when it is due (longer ones
 * wait parked in the table: webhooks/retries.ts).
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(deliveries: Delivery[]): Promise<void> {
    const batches: string[][] = [];
    let current: string[] = [];
    let bytes = 0;
    for (const delivery of deliveries) {
      const body = JSON.stringify(delivery);
      const size = Buffer.byteLength(body);
      if (current.length === 10 || (current.length && bytes + size > BATCH_BYTES)) {
        batches.push(current);
        current = [];
        bytes = 0;
      }
      current.push(body);
      bytes += size;
    }
    if (current.length) batches.push(current);
    await Promise.all(
      batches.map(async (batch) => {
        let entries = batch.map((body, i) => ({ Id: String(i), MessageBody: body }));
        // Entries SQS did not take are sent again (at most twice): the rest of the batch is in.
        for (let round = 0; entries.length; round++) {
          const { Failed = [] } = await this.sqs.send(
            new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }),
          );
          if (!Failed.length) return;
          if (round >= 2)
            throw new Error(`SQS refused ${Failed.length} webhook messages: ${Failed[0]?.Code ?? 'unknown'}`);
          const failed = new Set(Failed.map((f) => f.Id));
          entries = entries.filter((entry) => failed.has(entry.Id));
        }
      }),
    );
  }

  /** Hides a received message for `seconds` (at most 12 hours): when it comes back, it is the next attempt. */
  async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.round(seconds))),
      }),
    );
  }
}
