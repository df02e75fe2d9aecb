import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { AudienceCleanup } from '../../contacts/cleanup-jobs.js';
import { newSqsClient } from '../aws-clients.js';

/**
 * The audience clean-up queue (AUDIENCE_CLEANUP_QUEUE_URL) with its own SQS client, one job a
 * message, as one module the contact deletes load on first use: deployed, an island bundled on its
 * own (lib/bundling.ts ISLANDS), so SQS's code stays out of their cold start. (To be joined with
 * the segments' SQS adapter of the same queue at the merge: one writer of its messages.)
 */
export const createAudienceCleanup = (queueUrl: string): AudienceCleanup => {
  const sqs = newSqsClient();
  return {
    async enqueue(job) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
    },
  };
};
