import { interceptLocalhostDns } from 'fauxqs';
import { newSqsClient } from '../functions/adapters/aws-clients.js';
import { FUNCTIONS } from '../functions/catalog.js';
import { log as functionLog } from '../functions/observability/logger.js';
import type { AudienceConsumer } from './audience.js';
import { identifyCallers } from './caller-identity.js';
import { type SqsHandler, startPoller } from './sqs-poller.js';
import { startPartThread } from './threads.js';

/**
 * The queue consumers, as Lambda's event source mappings run them: a poller per queue, each
 * handing batches to its function's handler module (loaded here, so it builds its own clients from
 * the environment, as on Lambda).
 */
export interface ConsumerOptions {
  queues: {
    send: { url: string; arn: string };
    /** The broadcast lane (issue 41), consumed by process-broadcast-queue once the catalog declares it. */
    lane?: { url: string; arn: string };
    events: { url: string; arn: string };
    webhooks: { url: string; arn: string };
    /** The receipt rules' FIFO queue, read by their one writer. */
    receiptRules: { url: string; arn: string };
  };
  /** The audience queues whose workers the catalog declares (contact imports, audience clean-up). */
  audience?: AudienceConsumer[];
  events: { batchSize: number; batchWindowMs: number; timeoutMs: number; visibilityTimeoutSeconds: number };
  /** The send consumer's invocations at once (the stack's sendConcurrency), its timeout and its queue's visibility (s). */
  send: { concurrency: number; timeoutMs: number; visibilityTimeoutSeconds: number };
  /** Fault: the probability that a send batch is handed to two invocations at once. */
  duplicateDelivery?: number;
  /** Where the pollers' own trouble is told (on a thread, the functions' logger). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export interface Consumers {
  /** Resolves once no batch is being handled. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export async function startConsumers(options: ConsumerOptions): Promise<Consumers> {
  const load = async (name: string) =>
    (await import(`../functions/handlers/${name}.ts`)).handler as SqsHandler;
  // The pollers act for their functions (Lambda's event source polls with the function's role).
  const sqs = newSqsClient({
    endpoint: process.env.AWS_ENDPOINT_URL_SQS,
    region: process.env.AWS_REGION ?? 'us-east-1',
  });
  const { queues } = options;
  const pollers = [
    startPoller({
      sqs,
      queueUrl: queues.send.url,
      queueArn: queues.send.arn,
      functionName: 'process-send-queue',
      handler: await load('process-send-queue'),
      concurrency: options.send.concurrency,
      timeoutMs: options.send.timeoutMs,
      visibilityTimeoutSeconds: options.send.visibilityTimeoutSeconds,
      duplicateDelivery: options.duplicateDelivery,
      log: options.log,
    }),
    // The broadcast lane: as the send queue's consumer (its concurrency, timeout and visibility).
    ...(queues.lane && 'process-broadcast-queue' in FUNCTIONS
      ? [
          startPoller({
            sqs,
            queueUrl: queues.lane.url,
            queueArn: queues.lane.arn,
            functionName: 'process-broadcast-queue',
            handler: await load('process-broadcast-queue'),
            concurrency: options.send.concurrency,
            timeoutMs: options.send.timeoutMs,
            visibilityTimeoutSeconds: options.send.visibilityTimeoutSeconds,
            duplicateDelivery: options.duplicateDelivery,
            log: options.log,
          }),
        ]
      : []),
    startPoller({
      sqs,
      queueUrl: queues.events.url,
      queueArn: queues.events.arn,
      functionName: 'process-ses-events',
      batchSize: options.events.batchSize,
      batchWindowMs: options.events.batchWindowMs,
      timeoutMs: options.events.timeoutMs,
      visibilityTimeoutSeconds: options.events.visibilityTimeoutSeconds,
      handler: await load('process-ses-events'),
      log: options.log,
    }),
    startPoller({
      sqs,
      queueUrl: queues.webhooks.url,
      queueArn: queues.webhooks.arn,
      functionName: 'deliver-webhooks',
      // The stack's default maximum concurrency (lib/constructs/webhooks.ts).
      concurrency: 5,
      handler: await load('deliver-webhooks'),
      log: options.log,
    }),
    // One message at a time, by one invocation: the rules have one writer (the stack's batch size 1).
    startPoller({
      sqs,
      queueUrl: queues.receiptRules.url,
      queueArn: queues.receiptRules.arn,
      functionName: 'sync-receipt-rules',
      batchSize: 1,
      timeoutMs: 60_000,
      visibilityTimeoutSeconds: 60,
      handler: await load('sync-receipt-rules'),
      log: options.log,
    }),
    // One message at a time, within the stack's concurrency and timeout (functions/shared/audience-queues.ts).
    ...(await Promise.all(
      (options.audience ?? []).map(async ({ queue, settings }) =>
        startPoller({
          sqs,
          queueUrl: queue.url,
          queueArn: queue.arn,
          functionName: settings.worker,
          batchSize: settings.batchSize,
          concurrency: settings.maxConcurrency,
          timeoutMs: settings.timeoutSeconds * 1000,
          visibilityTimeoutSeconds: settings.timeoutSeconds * 6,
          handler: await load(settings.worker),
          log: options.log,
        }),
      ),
    )),
  ];
  return {
    async idle() {
      await Promise.all(pollers.map((p) => p.idle()));
    },
    async stop() {
      await Promise.all(pollers.map((p) => p.stop()));
    },
  };
}

/**
 * The consumers on a thread of their own (consumer-thread.ts), with this thread's environment as
 * it is now (set it first): the SDK work of sending and applying events runs on another core than
 * the API's.
 */
export async function startConsumersThread(options: Omit<ConsumerOptions, 'log'>): Promise<Consumers> {
  const thread = await startPartThread(new URL('./consumer-thread.ts', import.meta.url), options);
  return {
    idle: () => thread.call('idle'),
    stop: () => thread.stop(),
  };
}

/** In a consumers' thread: fauxqs's queue hosts resolve here too, and trouble goes to the functions' logger. */
export async function startConsumersHere(options: ConsumerOptions): Promise<Consumers> {
  const restoreDns = interceptLocalhostDns();
  // This thread's functions name themselves to the stand-ins too (caller-identity.ts).
  const stopIdentity = identifyCallers();
  const consumers = await startConsumers({
    ...options,
    log: (message, fields) => functionLog.warn(message, fields),
  });
  return {
    idle: () => consumers.idle(),
    async stop() {
      await consumers.stop();
      stopIdentity();
      restoreDns();
    },
  };
}
