import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type RunDeps, runImportStep } from '../contact-imports/run.js';
import { backgroundHandler } from '../observability/middleware.js';
import { importWorkerDeps } from '../wiring/contact-imports.js';

/** A step stops with this much of its function's time left, so its last chunk commits in time. */
export const STOP_BEFORE_MS = 60_000;

/**
 * The contact imports' queue consumer (contact-imports/run.ts): each message `{import_id}` is one
 * step of one import, from its checkpoint. A step that fails (thrown) is reported as a batch item
 * failure, so SQS delivers it again and the import goes on from its last commit.
 */
export const makeHandler =
  (deps: RunDeps) =>
  async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    const failures: { itemIdentifier: string }[] = [];
    for (const record of event.Records) {
      try {
        const { import_id } = JSON.parse(record.body) as { import_id: string };
        await runImportStep(deps, import_id, {
          timeUp: context ? () => context.getRemainingTimeInMillis() < STOP_BEFORE_MS : undefined,
        });
      } catch {
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };

export const handler = backgroundHandler(() => makeHandler(importWorkerDeps()));
