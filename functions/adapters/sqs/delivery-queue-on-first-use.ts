import type { DeliveryQueue } from '../../webhooks/ports.js';
import { onFirstUse } from '../on-first-use.js';

/**
 * The webhook delivery queue (SQS), built on first use: for the functions whose requests publish
 * only when an endpoint is subscribed to their events (a contact's changes), which read the
 * endpoints from the table first and reach the queue only then.
 */
export function deliveryQueueOnFirstUse(queueUrl: string): DeliveryQueue {
  const queue = onFirstUse(async () =>
    (await import('./delivery-queue-island.js')).createDeliveryQueue(queueUrl),
  );
  return { enqueue: async (deliveries, delaySeconds) => (await queue()).enqueue(deliveries, delaySeconds) };
}
