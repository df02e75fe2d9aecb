import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type CloudWatchLogsEvent, decodeAwslogs } from '../adapters/cloudwatch-logs/awslogs.js';
import { backgroundHandler } from '../observability/middleware.js';
import { storeRequestLogs } from '../request-logs/write.js';
import { requestLogWriterDeps } from '../wiring.js';

type Deps = Parameters<typeof storeRequestLogs>[0];

/** What Lambda's failure destination puts on the retry queue: the failed invocation, its event within. */
interface InvocationRecord {
  requestPayload?: CloudWatchLogsEvent;
}

const storeBatch = (deps: Deps, event: CloudWatchLogsEvent) => {
  const data = decodeAwslogs(event);
  if (data.messageType !== 'DATA_MESSAGE') return { stored: 0, skipped: 0, expired: 0 };
  return storeRequestLogs(
    deps,
    data.logEvents.map((logEvent) => logEvent.message),
  );
};

/**
 * The request-log writer: each API function's log group → subscription filter (the marked JSON
 * lines only) → here, a batch of lines at a time (docs/logs.md). The items are keyed by log id, so
 * a batch delivered again (CloudWatch retries an invocation that failed) writes the same items.
 * A failure to store throws: Lambda retries the invocation twice, then hands it to the failure
 * destination, the retry queue (lib/constructs/request-logs.ts), from which this same function
 * takes it again (an SQS event: each message a failed invocation's record, its batch inside) until
 * it is stored; a message that fails is left on the queue (a batch item failure) for its next try.
 */
export const makeHandler =
  (deps: Deps) =>
  async (
    event: CloudWatchLogsEvent | SQSEvent,
  ): Promise<Awaited<ReturnType<typeof storeRequestLogs>> | SQSBatchResponse> => {
    if (!('Records' in event)) return storeBatch(deps, event);
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      let payload: CloudWatchLogsEvent | undefined;
      try {
        payload = (JSON.parse(record.body) as InvocationRecord).requestPayload;
      } catch {
        payload = undefined;
      }
      if (!payload?.awslogs?.data) {
        // Not a failed invocation's record: nothing this function can store, ever.
        deps.log?.warn('a retry message without a request-log batch was skipped', {
          message_id: record.messageId,
        });
        continue;
      }
      try {
        await storeBatch(deps, payload);
      } catch (error) {
        deps.log?.warn('a request-log batch failed again; left on the retry queue', {
          message_id: record.messageId,
          error: String(error),
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };

export const handler = backgroundHandler(() => makeHandler(requestLogWriterDeps()));
