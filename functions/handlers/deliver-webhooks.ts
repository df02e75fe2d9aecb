import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { partialBatch } from '../sqs-batch.js';
import { type DeliverWebhookDeps, deliverWebhook } from '../webhooks/deliver.js';
import { attemptNumber, parseDelivery, type Webhook } from '../webhooks/model.js';
import type { WebhookRepository } from '../webhooks/ports.js';
import { type RetryLaterDeps, retryLater } from '../webhooks/retries.js';
import { webhookDeliveryDeps } from '../wiring/webhooks.js';

export interface DeliveryDeps extends DeliverWebhookDeps, RetryLaterDeps {
  webhooks: DeliverWebhookDeps['webhooks'] & Pick<WebhookRepository, 'get'>;
}

/**
 * The webhook delivery queue's consumer: each message is one event for one endpoint. The batch's
 * attempts run side by side (a slow endpoint holds its own message, at most 15 s, not the others);
 * each endpoint is read once per batch, just before its attempts, so a rotated secret, a new URL or
 * a disabled endpoint applies at once. A failed attempt's message is hidden until its retry is due
 * and reported as a batch item failure (SQS hands it back then); a retry due later than the queue
 * can hold is parked in the table first and its message reported done, so the event source deletes
 * it (see webhooks/retries.ts).
 */
export const makeHandler =
  (deps: DeliveryDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const endpoints = new Map<string, Promise<Webhook | null>>();
    const endpoint = (id: string) => {
      let found = endpoints.get(id);
      if (!found) {
        found = deps.webhooks.get(id);
        endpoints.set(id, found);
      }
      return found;
    };
    return partialBatch(event, (record) => processRecord(deps, record, endpoint));
  };

async function processRecord(
  deps: DeliveryDeps,
  record: SQSRecord,
  endpoint: (id: string) => Promise<Webhook | null>,
): Promise<boolean> {
  const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? '1');
  const delivery = parseDelivery(record.body);
  if (!delivery) {
    // Nothing to attempt: it reaches the dead-letter queue after the queue's maxReceiveCount.
    logger.error('unreadable webhook message', { messageId: record.messageId, receiveCount });
    return false;
  }
  const attempt = attemptNumber(delivery, receiveCount);
  const ids = { webhook_id: delivery.webhook_id, message_id: delivery.message_id, type: delivery.type };
  try {
    const outcome = await deliverWebhook(deps, delivery, attempt, await endpoint(delivery.webhook_id));
    logger.info('webhook message', { ...ids, attempt, ...outcome });
    if (outcome.result !== 'retry') return true;
    // Parked in the table: the message is done (deleted); waiting on the queue: it comes back.
    return (await retryLater(deps, delivery, attempt, outcome, record.receiptHandle)) === 'table';
  } catch (error) {
    // The table or the queue failed: the message comes back after the queue's visibility timeout.
    logger.error('webhook message failed', { ...ids, attempt, error });
    return false;
  }
}

export const handler = backgroundHandler(() => makeHandler(webhookDeliveryDeps()));
