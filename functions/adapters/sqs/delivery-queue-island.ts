import type { DeliveryQueue } from '../../webhooks/ports.js';
import { newSqsClient } from '../aws-clients.js';
import { SqsDeliveryQueue } from './delivery-queue.js';

/**
 * The webhook delivery queue with its own SQS client, as one module a function that rarely
 * publishes loads on first use (delivery-queue-on-first-use.ts): deployed, an island bundled on its
 * own (lib/bundling.ts ISLANDS), so SQS's code stays out of that function's cold start.
 */
export const createDeliveryQueue = (queueUrl: string): DeliveryQueue =>
  new SqsDeliveryQueue(newSqsClient(), queueUrl);
