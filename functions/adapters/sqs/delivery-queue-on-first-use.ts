import type { DeliveryQueue } from '../../webhooks/ports.js';
import { onFirstUse } from '../on-first-use.js';

/**
 * The webhook delivery queue (SQS), built on first use: for the audience routes, which publish an
 * event only when some endpoint takes its type (most deployments subscribe to none of them).
 */
export function deliveryQueueOnFirstUse(queueUrl: string): DeliveryQueue {
  const queue = onFirstUse(async () =>
    (await import('./delivery-queue-island.js')).createDeliveryQueue(queueUrl),
  );
  return { enqueue: async (deliveries, delaySeconds) => (await queue()).enqueue(deliveries, delaySeconds) };
}
