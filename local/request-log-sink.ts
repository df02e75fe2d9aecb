import { randomUUID } from 'node:crypto';
import type { Context, SQSEvent } from 'aws-lambda';
import { type CloudWatchLogsEvent, encodeAwslogs } from '../functions/adapters/cloudwatch-logs/awslogs.js';
import { directRequestLogs } from '../functions/observability/request-log-sink.js';
import type { RequestLogSink } from '../functions/request-logs/model.js';
import { asRuntime, currentFunction, invoke } from './invocation.js';
import { lambdaContext } from './lambda-context.js';

type WriterHandler = (event: CloudWatchLogsEvent | SQSEvent, context: Context) => Promise<unknown>;

export interface RequestLogSubscription {
  /** Resolves once every line emitted so far has been handed to the writer and written. */
  flush(): Promise<void>;
  stop(): Promise<void>;
  /** The lines emitted so far, and the bytes CloudWatch Logs would bill for them (each line and 26). */
  ingested(): { lines: number; bytes: number };
}

/**
 * The local twin of the API functions' log groups and their subscription filters: the lines the
 * functions emit (functions/observability/request-log-sink.ts) are gathered per function's log
 * group for `batchMs` and handed to the writer's handler as CloudWatch Logs does, in the same
 * `awslogs` event (gzip, base64; DATA_MESSAGE), outside the request; a failed invocation is tried
 * twice more, as Lambda retries an asynchronous one, then kept and tried again every `retryMs` in
 * the shape the writer takes it back from its retry queue on AWS (an SQS record whose body is
 * Lambda's invocation record, the batch its `requestPayload`), so the same branch of the writer
 * runs here; never dropped while the service runs (on AWS, after 10 receives, the dead-letter queue).
 */
export function startRequestLogSubscription(options: {
  writer: WriterHandler;
  batchMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  retryMs?: number;
}): RequestLogSubscription {
  const batchMs = options.batchMs ?? 200;
  const retryMs = options.retryMs ?? 5_000;
  let stopped = false;
  let pending = new Map<string, { id: string; timestamp: number; message: string }[]>();
  let timer: NodeJS.Timeout | undefined;
  const inFlight = new Set<Promise<void>>();
  const ingested = { lines: 0, bytes: 0 };

  const deliver = async (
    functionName: string,
    events: { id: string; timestamp: number; message: string }[],
  ) => {
    const event = encodeAwslogs({
      messageType: 'DATA_MESSAGE',
      owner: '000000000000',
      logGroup: `/aws/lambda/${functionName}`,
      logStream: `local/[$LATEST]${functionName}`,
      subscriptionFilters: ['request-logs'],
      logEvents: events,
    });
    const invokeWriter = () =>
      invoke('write-request-logs', () => options.writer(event, lambdaContext('write-request-logs', 30_000)));
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await invokeWriter();
        return;
      } catch (error) {
        if (attempt === 3)
          options.log?.('request logs kept for a retry after 3 attempts', {
            error: String(error),
            lines: events.length,
          });
      }
    }
    // The retry queue's twin: the failed invocation's record on the queue, taken again later until stored.
    const messageId = randomUUID();
    const fromRetryQueue: SQSEvent = {
      Records: [
        {
          messageId,
          receiptHandle: messageId,
          body: JSON.stringify({
            version: '1.0',
            timestamp: new Date().toISOString(),
            requestContext: { functionArn: 'write-request-logs', condition: 'RetriesExhausted' },
            requestPayload: event,
          }),
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: String(Date.now()),
            SenderId: 'local',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:local:000000000000:request-log-retries',
          awsRegion: 'local',
        },
      ],
    };
    const retryWriter = async () => {
      const answer = (await invoke('write-request-logs', () =>
        options.writer(fromRetryQueue, lambdaContext('write-request-logs', 30_000)),
      )) as { batchItemFailures?: unknown[] } | undefined;
      if (answer?.batchItemFailures?.length) throw new Error('the request-log batch failed again');
    };
    const retry = () => {
      if (stopped) {
        options.log?.('request logs not stored before the service stopped', { lines: events.length });
        return;
      }
      asRuntime(retryWriter).catch(() => setTimeout(retry, retryMs).unref());
    };
    setTimeout(retry, retryMs).unref();
  };

  const flushNow = () => {
    timer = undefined;
    const batches = pending;
    pending = new Map();
    for (const [functionName, events] of batches) {
      const done = asRuntime(() => deliver(functionName, events)).finally(() => inFlight.delete(done));
      inFlight.add(done);
    }
  };

  const sink: RequestLogSink = {
    write(line) {
      ingested.lines++;
      ingested.bytes += Buffer.byteLength(line) + 26;
      const functionName = currentFunction() ?? 'unknown';
      const events = pending.get(functionName) ?? [];
      events.push({ id: randomUUID(), timestamp: Date.now(), message: `${line}\n` });
      pending.set(functionName, events);
      timer ??= setTimeout(flushNow, batchMs);
    },
  };
  directRequestLogs(sink);

  const flush = async () => {
    if (timer) {
      clearTimeout(timer);
      flushNow();
    }
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  };
  return {
    flush,
    ingested: () => ({ ...ingested }),
    async stop() {
      await flush();
      stopped = true;
      directRequestLogs(undefined);
    },
  };
}
