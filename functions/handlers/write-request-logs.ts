import { type CloudWatchLogsEvent, decodeAwslogs } from '../adapters/cloudwatch-logs/awslogs.js';
import { backgroundHandler } from '../observability/middleware.js';
import { storeRequestLogs } from '../request-logs/write.js';
import { requestLogWriterDeps } from '../wiring.js';

/**
 * The request-log writer: each API function's log group → subscription filter (the marked JSON
 * lines only) → here, a batch of lines at a time (docs/logs.md). The items are keyed by log id, so
 * a batch delivered again (CloudWatch retries an invocation that failed) writes the same items.
 * A failure to store throws: the invocation is retried by Lambda's asynchronous retries.
 */
export const makeHandler =
  (deps: Parameters<typeof storeRequestLogs>[0]) =>
  async (event: CloudWatchLogsEvent): Promise<{ stored: number; skipped: number }> => {
    const data = decodeAwslogs(event);
    if (data.messageType !== 'DATA_MESSAGE') return { stored: 0, skipped: 0 };
    return storeRequestLogs(
      deps,
      data.logEvents.map((logEvent) => logEvent.message),
    );
  };

export const handler = backgroundHandler(() => makeHandler(requestLogWriterDeps()));
