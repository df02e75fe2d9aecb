import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Delivery } from '../../webhooks/model.js';
import type { DeliveryQueue } from '../../webhooks/ports.js';

/** SQS's limit on a SendMessageBatch call's messages together, less a margin for the envelope. */
const BATCH_BYTES = 250 * 1024;

/** SQS's longest message delay. */
export const MAX_DELAY_SECONDS = 15 * 60;

/**
 * The webhook delivery queue: one message per (event, endpoint), ten to a SendMessageBatch call.
 * A short retry waits here as a new message sent with the retry's delay (DelaySeconds), never as
 * a received message kept hidden: a delayed message is not in flight (longer retries wait parked
 * in the table: webhooks/retries.ts).
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(deliveries: Delivery[], delaySeconds?: number): Promise<void> {
    const delay =
      delaySeconds === undefined
        ? {}
        : { DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.round(delaySeconds))) };
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
        let entries = batch.map((body, i) => ({ Id: String(i), MessageBody: body, ...delay }));
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
}
