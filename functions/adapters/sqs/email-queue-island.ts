import type { EmailQueue } from '../../emails/ports.js';
import { newSqsClient } from '../aws-clients.js';
import { SqsEmailQueue } from './email-queue.js';

/**
 * The send queue with its own SQS client, as one module a function that rarely queues loads on
 * first use (email-queue-on-first-use.ts): deployed, an island bundled on its own (lib/bundling.ts
 * ISLANDS), so SQS's code stays out of that function's cold start.
 */
export const createEmailQueue = (queueUrl: string): EmailQueue => new SqsEmailQueue(newSqsClient(), queueUrl);
