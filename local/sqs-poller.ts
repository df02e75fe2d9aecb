import { createHash } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { chance } from './faults.js';
import { asRuntime, invoke, runAs } from './invocation.js';
import { lambdaContext } from './lambda-context.js';

export type SqsHandler = (
  event: SQSEvent,
  context: ReturnType<typeof lambdaContext>,
) => Promise<SQSBatchResponse | undefined>;

export interface Poller {
  /** Resolves once no batch is being handled. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * What Lambda's SQS event source mapping does on AWS, locally: long-poll the queue, hand each
 * batch to the handler in the Lambda SQS event shape, delete the messages it did not report as
 * failed (ReportBatchItemFailures), and leave the failed ones to reappear after the visibility
 * timeout, so the queue's redrive policy moves poison messages to the dead-letter queue.
 */
export function startPoller(options: {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  functionName: string;
  handler: SqsHandler;
  /** Most messages handed to one invocation. @default 10 */
  batchSize?: number;
  /** How long to go on gathering a batch after its first message (the mapping's batching window). @default 0 */
  batchWindowMs?: number;
  timeoutMs?: number;
  /**
   * Most invocations at once (the mapping's maximum concurrency): that many pollers, each handing
   * its batches to an invocation of its own. @default 1
   */
  concurrency?: number;
  /**
   * The queue's visibility timeout (s). On AWS it is at least six times the function's timeout, so a
   * message never reappears while its invocation runs; locally it is shorter, to retry in seconds,
   * so the poller keeps a batch's messages hidden until its invocation ends (as AWS's timings
   * guarantee), and a message reported failed reappears this long after.
   */
  visibilityTimeoutSeconds?: number;
  /** Fault: the probability that a batch is handed to two invocations at once (SQS delivers at least once). */
  duplicateDelivery?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}): Poller {
  const abort = new AbortController();
  /** Batches being handled, each with what resolves when it is done. */
  const inFlight = new Set<Promise<void>>();

  const toRecord = (m: {
    MessageId?: string;
    ReceiptHandle?: string;
    Body?: string;
    Attributes?: Record<string, string>;
    MD5OfBody?: string;
  }): SQSRecord => ({
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
      SenderId: m.Attributes?.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody:
      m.MD5OfBody ??
      createHash('md5')
        .update(m.Body ?? '')
        .digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: options.queueArn,
    awsRegion: 'us-east-1',
  });

  /** Keeps the records hidden while their invocation runs; returns what stops it. */
  const holdHidden = (records: SQSRecord[]) => {
    const seconds = options.visibilityTimeoutSeconds;
    if (!seconds) return () => undefined;
    const timer = setInterval(
      () =>
        // The runtime's own doing (what AWS's timings guarantee), not a call of the function's.
        asRuntime(() =>
          options.sqs
            .send(
              new ChangeMessageVisibilityBatchCommand({
                QueueUrl: options.queueUrl,
                Entries: records.map((r, i) => ({
                  Id: String(i),
                  ReceiptHandle: r.receiptHandle,
                  VisibilityTimeout: seconds,
                })),
              }),
            )
            .catch(() => undefined),
        ),
      (seconds * 1000) / 2,
    );
    return () => clearInterval(timer);
  };

  const loop = async () => {
    while (!abort.signal.aborted) {
      let messages: Message[] | undefined;
      const batchSize = options.batchSize ?? 10;
      const receive = async (max: number, waitSeconds: number) =>
        (
          await options.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: options.queueUrl,
              MaxNumberOfMessages: Math.min(10, max),
              WaitTimeSeconds: waitSeconds,
              MessageSystemAttributeNames: ['All'],
            }),
            { abortSignal: abort.signal },
          )
        ).Messages ?? [];
      try {
        messages = await receive(batchSize, 1);
        // As the event source mapping does: go on gathering until the batch is full or its window ends.
        const windowEnds = Date.now() + (options.batchWindowMs ?? 0);
        while (messages.length && messages.length < batchSize && Date.now() < windowEnds) {
          const more = await receive(batchSize - messages.length, 0);
          messages.push(...more);
          if (!more.length)
            await new Promise((resolve) => setTimeout(resolve, Math.min(50, windowEnds - Date.now())));
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        options.log?.('receive failed', { queue: options.functionName, error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (!messages?.length) continue;
      let release: () => void = () => undefined;
      const busy = new Promise<void>((resolve) => {
        release = resolve;
      });
      inFlight.add(busy);
      try {
        const records = messages.map(toRecord);
        const handle = async (): Promise<Set<string>> => {
          try {
            const result = await invoke(options.functionName, () =>
              options.handler(
                { Records: records },
                lambdaContext(options.functionName, options.timeoutMs ?? 30_000),
              ),
            );
            return new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
          } catch (error) {
            options.log?.('handler threw; the whole batch will be retried', { error: String(error) });
            return new Set(records.map((r) => r.messageId));
          }
        };
        const copies = chance(options.duplicateDelivery) ? 2 : 1;
        const hold = holdHidden(records);
        const outcomes = await Promise.all(Array.from({ length: copies }, handle)).finally(hold);
        // A message either invocation finished is deleted (each would delete its own copy).
        const done = records.filter((r) => outcomes.some((failed) => !failed.has(r.messageId)));
        // Ten a call (DeleteMessageBatch's limit), as the event source mapping deletes.
        for (let i = 0; i < done.length; i += 10) {
          await options.sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: options.queueUrl,
              Entries: done
                .slice(i, i + 10)
                .map((r, j) => ({ Id: String(j), ReceiptHandle: r.receiptHandle })),
            }),
          );
        }
      } catch (error) {
        options.log?.('batch handling failed', { error: String(error) });
      } finally {
        inFlight.delete(busy);
        release();
      }
    }
  };
  // Its receives and deletes are the function's too: Lambda's event source polls with the function's role.
  const running = Promise.all(
    Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => runAs(options.functionName, loop)),
  );

  return {
    async idle() {
      while (inFlight.size) await Promise.all([...inFlight]);
    },
    async stop() {
      abort.abort();
      await running;
    },
  };
}
