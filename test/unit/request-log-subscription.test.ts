/**
 * The local twin of the request logs' subscription: a batch the writer fails three times (Lambda's
 * asynchronous tries) is handed to it again as its retry queue hands it on AWS, an SQS record
 * whose body is Lambda's invocation record with the batch as `requestPayload`, until stored.
 */
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudWatchLogsEvent } from '../../functions/adapters/cloudwatch-logs/awslogs.js';
import { requestLogSink } from '../../functions/observability/request-log-sink.js';
import { startRequestLogSubscription } from '../../local/request-log-sink.js';
import { waitFor } from '../support/https.js';

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

describe('the local request-log subscription', () => {
  it('hands a batch that failed three times back to the writer as the retry queue does, until stored', async () => {
    const seen: (CloudWatchLogsEvent | SQSEvent)[] = [];
    let retriesToFail = 1;
    const subscription = startRequestLogSubscription({
      batchMs: 10,
      retryMs: 20,
      writer: async (event) => {
        seen.push(event);
        // The batch as CloudWatch Logs hands it: failing (DynamoDB throttling the table).
        if (!('Records' in event)) throw new Error('DynamoDB throttled the table');
        // From the retry queue: the first fails again as the writer reports it, the next is stored.
        if (retriesToFail-- > 0)
          return { batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }] };
        return { batchItemFailures: [] };
      },
    });
    stop = () => subscription.stop();
    requestLogSink.write('{"line":1}');
    await subscription.flush();
    // Three tries of the raw batch, then retries in the queue's shape, the failed one tried again.
    await waitFor(
      async () => seen.length,
      (count) => count >= 5,
    );
    // Stored at the fifth: no sixth.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen).toHaveLength(5);
    const [first, second, third, ...retries] = seen;
    for (const raw of [first, second, third]) expect(raw).toHaveProperty('awslogs');
    for (const retry of retries) {
      const record = (retry as SQSEvent).Records[0];
      expect(JSON.parse(record?.body ?? '{}').requestPayload).toEqual(first);
    }
  });
});
