import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { backgroundHandler } from '../observability/middleware.js';
import { type DeliverBatchDeps, deliverBatch } from '../webhooks/deliver-batch.js';
import { webhookDeliveryDeps } from '../wiring/webhooks.js';

/**
 * The webhook delivery queue's consumer (webhooks/deliver-batch.ts): each message is one event for
 * one endpoint. The messages it did not finish are reported as batch item failures; the others
 * (attempted, their retry sent or parked, or held by their endpoint's breaker) are deleted by the
 * event source.
 */
export const makeHandler =
  (deps: DeliverBatchDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed = await deliverBatch(
      deps,
      event.Records.map((record) => ({
        id: record.messageId,
        body: record.body,
        receiveCount: Number(record.attributes.ApproximateReceiveCount ?? '1'),
      })),
    );
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = backgroundHandler(() => makeHandler(webhookDeliveryDeps()));
