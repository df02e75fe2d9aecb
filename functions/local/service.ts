import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyRepository } from '../adapters/dynamodb/api-key-repository.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../adapters/dynamodb/email-repository.js';
import { keys } from '../adapters/dynamodb/table.js';
import { SqsEmailQueue } from '../adapters/sqs/email-queue.js';
import { generateApiKey, hashToken, looksLikeToken, TOKEN_PREFIX } from '../core/api-keys.js';
import { contentOf } from '../core/email.js';
import { FALLBACK_HANDLER, ROUTES } from '../routes.js';
import { startEmulators } from './emulators.js';
import { type HttpLambda, startHttpsGateway } from './https-gateway.js';
import { ensureQueueWithDlq, ensureTable } from './resources.js';
import { startSesStandIn } from './ses-stand-in.js';
import { type SqsHandler, startPoller } from './sqs-poller.js';
import { localTls } from './tls.js';

export interface LocalServiceOptions {
  /** HTTPS port (0: any free port). @default 3000 */
  port?: number;
  /** Where data survives restarts; null keeps everything in memory. @default '.local-data' */
  dataDir?: string | null;
  /** Accept this key instead of generating one (DEV_API_KEY). */
  apiKey?: string;
  /** Port of the sent-mail viewer (the SES emulator's page). 0: any free port. @default 8005 */
  viewerPort?: number;
  /** Delay before simulated delivery events. @default 150 */
  eventDelayMs?: number;
  /** Receives before a send message goes to the dead-letter queue (the stack's sendMaxAttempts). @default 5 */
  sendMaxAttempts?: number;
  /** Visibility timeout of the local send queue: how soon a failed send is retried. @default 5 */
  sendRetryDelaySeconds?: number;
  /** How long a new domain stays pending before it verifies, as if its DNS records were published. @default 3000 */
  domainVerifyMs?: number;
  /** How long a domain under `.invalid` stays pending before it fails. @default 10000 */
  domainFailMs?: number;
  /** Requests per second each API key may make (the stack's keyRateLimit). @default 10 */
  rateLimitPerSecond?: number;
  /** How often the scheduled domain check runs (EventBridge's schedule on AWS). @default 1000 */
  domainCheckIntervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export interface LocalService {
  baseUrl: string;
  apiKey: string;
  viewerUrl: string;
  /** PEM of the self-signed certificate clients must trust (`curl --cacert`). */
  certificate: string;
  certificatePath?: string;
  tableName: string;
  sendQueueUrl: string;
  endpoints: { dynamodb: string; sqs: string; ses: string };
  /** Calls the emulators received so far, by operation (what the same traffic costs on AWS). */
  awsCalls(): Record<string, number>;
  /** Resolves when no send, event or consumer batch is in progress (for tests and benchmarks). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const TABLE_NAME = 'email-service';
const CONFIGURATION_SET = 'email-service-local';

/**
 * The whole service on this machine, from the same handler modules Lambda runs: embedded
 * emulators, the table and queues as the stack defines them, an HTTPS gateway built from the route
 * table, pollers in place of the SQS event sources, and SES event publishing in place of SES's.
 */
export async function startLocalService(options: LocalServiceOptions = {}): Promise<LocalService> {
  const dataDir = options.dataDir === undefined ? '.local-data' : options.dataDir;
  // The pinned SDK runs on Node 20; its notice about future releases needing Node 22 is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const sendMaxAttempts = options.sendMaxAttempts ?? 5;
  const emulators = await startEmulators({
    dataDir: dataDir ? join(dataDir, 'dynamodb') : undefined,
    sesPort: options.viewerPort ?? 8005,
  });
  const stops: (() => Promise<void>)[] = [() => emulators.stop()];
  try {
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const region = 'us-east-1';
    const dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region, credentials });
    const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region, credentials });
    await ensureTable(dynamodb, TABLE_NAME);
    const send = await ensureQueueWithDlq(sqs, 'email-service-send', {
      maxReceiveCount: sendMaxAttempts,
      visibilityTimeoutSeconds: options.sendRetryDelaySeconds ?? 5,
    });
    const events = await ensureQueueWithDlq(sqs, 'email-service-ses-events', {
      maxReceiveCount: 5,
      visibilityTimeoutSeconds: 5,
    });
    const ses = await startSesStandIn({
      emulatorEndpoint: emulators.sesEndpoint,
      sqs,
      eventsQueueUrl: events.queue.url,
      eventDelayMs: options.eventDelayMs,
      identities: {
        verifyAfterMs: options.domainVerifyMs,
        failAfterMs: options.domainFailMs,
        file: dataDir ? join(dataDir, 'ses', 'identities.json') : undefined,
        region,
      },
      log: options.log,
    });
    stops.unshift(() => ses.stop());

    // The handlers build their clients from the environment, as on Lambda.
    Object.assign(process.env, {
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
      // The host fauxqs puts in queue URLs, so the SDK sees one origin (see emulators.ts).
      AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint.replace('127.0.0.1', 'sqs.us-east-1.localhost'),
      AWS_ENDPOINT_URL_SESV2: ses.endpoint,
      TABLE_NAME,
      SEND_QUEUE_URL: send.queue.url,
      CONFIGURATION_SET_NAME: CONFIGURATION_SET,
      SEND_MAX_RECEIVE_COUNT: String(sendMaxAttempts),
      SEND_LEASE_MS: '30000',
      RATE_LIMIT_PER_SECOND: String(options.rateLimitPerSecond ?? 10),
    });
    delete process.env.AWS_PROFILE;

    const db = createDocumentClient(dynamodb);
    const apiKey = await issueDevKey(db, options.apiKey);
    await requeueStranded(db, sqs, send.queue.url, options.log);

    const load = async <T>(name: string) => (await import(`../handlers/${name}.ts`)).handler as T;
    const handlers: Record<string, HttpLambda> = {};
    for (const route of ROUTES) handlers[route.handler] = await load<HttpLambda>(route.handler);
    const pollers = [
      startPoller({
        sqs,
        queueUrl: send.queue.url,
        queueArn: send.queue.arn,
        functionName: 'process-send-queue',
        handler: await load<SqsHandler>('process-send-queue'),
        log: options.log,
      }),
      startPoller({
        sqs,
        queueUrl: events.queue.url,
        queueArn: events.queue.arn,
        functionName: 'process-ses-events',
        handler: await load<SqsHandler>('process-ses-events'),
        log: options.log,
      }),
    ];
    stops.unshift(async () => {
      await Promise.all(pollers.map((p) => p.stop()));
    });
    const scheduler = startSchedule(
      await load<() => Promise<unknown>>('check-domains'),
      options.domainCheckIntervalMs ?? 1000,
      options.log,
    );
    stops.unshift(() => scheduler.stop());

    const tls = await localTls(dataDir ? join(dataDir, 'tls') : undefined);
    const gateway = await startHttpsGateway({
      tls,
      port: options.port ?? 3000,
      handlers,
      fallback: await load<HttpLambda>(FALLBACK_HANDLER),
      log: options.log,
    });
    stops.unshift(() => gateway.stop());

    return {
      baseUrl: `https://localhost:${gateway.port}/v1`,
      apiKey,
      viewerUrl: emulators.sesEndpoint,
      certificate: tls.cert,
      certificatePath: tls.certPath,
      tableName: TABLE_NAME,
      sendQueueUrl: send.queue.url,
      endpoints: { dynamodb: emulators.dynamodbEndpoint, sqs: emulators.sqsEndpoint, ses: ses.endpoint },
      awsCalls: () => emulators.calls(),
      async idle() {
        // Quiet means: no event waiting to be published, no batch being handled, no message in
        // either queue (visible or in flight). Events trigger consumers and back, so check twice.
        const queued = async (url: string) => {
          const { Attributes } = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
            }),
          );
          return (
            Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
            Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
          );
        };
        const deadline = Date.now() + 60_000;
        let quietRounds = 0;
        while (quietRounds < 2 && Date.now() < deadline) {
          await ses.idle();
          await Promise.all(pollers.map((p) => p.idle()));
          const waiting = (await queued(send.queue.url)) + (await queued(events.queue.url));
          quietRounds = waiting === 0 && !ses.busy() ? quietRounds + 1 : 0;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
      stop: () => stopAll(stops),
    };
  } catch (error) {
    await stopAll(stops);
    throw error;
  }
}

/** Runs a scheduled function every `intervalMs`, one run at a time (EventBridge's rule on AWS). */
function startSchedule(
  run: () => Promise<unknown>,
  intervalMs: number,
  log?: (message: string, fields?: Record<string, unknown>) => void,
) {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= run()
      .catch((error) => log?.('scheduled run failed', { error: String(error) }))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

async function stopAll(stops: (() => Promise<void>)[]) {
  for (const stop of stops.splice(0)) await stop().catch(() => undefined);
}

/**
 * The local full-access key: DEV_API_KEY when given, else a new one. Only its hash is stored, and
 * the key issued by the previous start is revoked, so exactly one local key works at a time.
 */
async function issueDevKey(db: ReturnType<typeof createDocumentClient>, chosen?: string): Promise<string> {
  const repo = new DynamoApiKeyRepository(db, TABLE_NAME);
  const tableName = TABLE_NAME;
  const pointer = { pk: keys.localDevKey, sk: 'LOCAL' };
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: pointer }));
  let token: string;
  const { key, token: generated } = generateApiKey('local development', 'full_access', new Date());
  if (chosen !== undefined) {
    if (!looksLikeToken(chosen)) {
      throw new Error(
        `DEV_API_KEY must be "${TOKEN_PREFIX}" followed by 16 to 128 letters, digits, "-" or "_".`,
      );
    }
    token = chosen;
    key.hash = hashToken(chosen);
  } else {
    token = generated;
  }
  if (Item?.hash && Item.hash !== key.hash) await repo.deleteByHash(String(Item.hash));
  await repo.put(key);
  await db.send(new PutCommand({ TableName: tableName, Item: { ...pointer, hash: key.hash } }));
  return token;
}

/**
 * Locally the queue lives in memory, so a restart loses the messages of emails still queued.
 * Put them back; the consumer's claim makes sure none of them is sent twice.
 */
async function requeueStranded(
  db: ReturnType<typeof createDocumentClient>,
  sqs: SQSClient,
  queueUrl: string,
  log?: (message: string, fields?: Record<string, unknown>) => void,
) {
  const emails = new DynamoEmailRepository(db, TABLE_NAME);
  const queue = new SqsEmailQueue(sqs, queueUrl);
  let count = 0;
  for (let offset = 0; offset <= 10_000; offset += 100) {
    const page = await emails.list({ status: 'queued', limit: 100, offset });
    for (const summary of page.data) {
      const email = await emails.get(summary.id);
      if (!email || email.sent_at) continue;
      await queue.enqueue({ id: email.id, content: contentOf(email) });
      count++;
    }
    if (!page.has_more) break;
  }
  if (count) log?.('requeued emails left queued by the previous run', { count });
}
