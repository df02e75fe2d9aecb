import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { type CleanupDeps, cleanUpAudience, parseCleanupJob } from '../contacts/cleanup.js';
import { backgroundHandler } from '../observability/middleware.js';
import type { Log } from '../shared/ports.js';
import { partialBatch } from '../sqs-batch.js';
import { cleanUpAudienceDeps } from '../wiring/segments.js';

/**
 * The audience clean-up, the consumer of its queue: each message one job (contacts/cleanup.ts), run
 * side by side; a job that fails is reported as a batch item failure and comes back from the queue
 * (and after the queue's receive count, goes to its dead-letter queue). A job is idempotent.
 */
export const makeHandler = (deps: CleanupDeps & { log: Log }) => (event: SQSEvent) =>
  partialBatch(event, async (record: SQSRecord) => {
    try {
      const job = parseCleanupJob(record.body);
      const result = await cleanUpAudience(deps, job);
      deps.log.info('audience cleaned up', { kind: job.kind, ...result });
      return true;
    } catch (error) {
      deps.log.error('audience clean-up failed', { error, messageId: record.messageId });
      return false;
    }
  });

export const handler = backgroundHandler(() => makeHandler(cleanUpAudienceDeps()));
