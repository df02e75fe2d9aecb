import type { AudienceCleanup } from '../../contacts/cleanup-jobs.js';
import { newSqsClient } from '../aws-clients.js';
import { SqsAudienceCleanup } from './audience-cleanup-queue.js';

/**
 * The audience clean-up queue (AUDIENCE_CLEANUP_QUEUE_URL) with its own SQS client, as one module
 * the contact deletes load on first use: deployed, an island bundled on its own (lib/bundling.ts
 * ISLANDS), so SQS's code stays out of their cold start. The one writer of its messages is
 * SqsAudienceCleanup (its settle delay included).
 */
export const createAudienceCleanup = (queueUrl: string): AudienceCleanup =>
  new SqsAudienceCleanup(newSqsClient(), queueUrl);
