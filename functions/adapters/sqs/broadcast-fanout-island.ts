import type { BroadcastFanOutQueue } from '../../broadcasts/ports.js';
import { newSqsClient } from '../aws-clients.js';
import { SqsBroadcastFanOutQueue } from './broadcast-fanout-queue.js';

/**
 * The broadcasts' fan-out queue (BROADCAST_FANOUT_QUEUE_URL) with its own SQS client, as one module
 * create-broadcast loads on first use (most creates are drafts, which queue nothing): deployed, an
 * island bundled on its own (lib/bundling.ts ISLANDS), so SQS's code stays out of its cold start.
 */
export const createBroadcastFanOutQueue = (queueUrl: string): BroadcastFanOutQueue =>
  new SqsBroadcastFanOutQueue(newSqsClient(), queueUrl);
