import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { newSqsClient } from '../functions/adapters/aws-clients.js';
import { createDocumentClient, isThrottling, pause } from '../functions/adapters/dynamodb/client.js';
import { SCHEDULED_FUNCTIONS } from '../functions/catalog.js';
import { type SendTimings, timingSettings } from '../functions/emails/send-timings.js';
import { configuredLogLevel, logger } from '../functions/observability/logger.js';
import { FALLBACK_HANDLER, ROUTES } from '../functions/routes.js';
import { MAX_ATTEMPTS } from '../functions/webhooks/model.js';
import { checkSettings } from '../functions/wiring.js';
import { type AudienceQueues, ensureAudienceQueues, gatewayPort } from './audience.js';
import { identifyCallers } from './caller-identity.js';
import { startConsumers, startConsumersThread } from './consumers.js';
import { issueDevKey } from './dev-key.js';
import { type Emulators, startEmulators, startEmulatorsThread } from './emulators.js';
import { injectClientFaults } from './faults.js';
import { type HttpLambda, startHttpsGateway } from './https-gateway.js';
import { ensureReceivingQueues, startLocalReceiving } from './receiving.js';
import { recoverFromLastRun, stillRunning } from './recovery.js';
import { startRequestLogSubscription } from './request-log-sink.js';
import { ensureQueueWithDlq, ensureTable, queueDepth, TABLE_NAME } from './resources.js';
import { type ScheduledHandler, startSchedule } from './schedules.js';
import { startLocalUnsubscribeKeys } from './secrets-extension.js';
import { type BroadcastLaneUrls, ensureSendQueues } from './send-queues.js';
import { LOCAL_CONFIGURATION_SET, LOCAL_EVENTS_TOPIC_ARN } from './ses-configuration-sets.js';
import { type LocalSes, type SesStandInSettings, startSesHere } from './ses-stand-in.js';
import { startLocalSmtpRelay } from './smtp-relay.js';
import { localTimings } from './timings.js';
import { localTls } from './tls.js';
import { startLocalTrackingFront } from './tracking-front.js';

export { DataDirInUse } from './recovery.js';

import type { LocalServiceOptions } from './service-options.js';

export { scheduledEvent } from './schedules.js';
export type { LocalServiceOptions } from './service-options.js';
export interface LocalService {
  baseUrl: string;
  apiKey: string;
  viewerUrl: string;
  /** PEM of the self-signed certificate clients must trust (`curl --cacert`). */
  certificate: string;
  certificatePath?: string;
  tableName: string;
  sendQueueUrl: string;
  /** The local queues, by the part they play (the stack's SendQueue, SendDeadLetterQueue, …). */
  queues: {
    send: string;
    sendDeadLetters: string;
    events: string;
    eventsDeadLetters: string;
    webhooks: string;
    webhookDeadLetters: string;
    receiptRules: string;
    receiptRulesDeadLetters: string;
    receivedFailures: string;
  } & AudienceQueues['urls'] &
    BroadcastLaneUrls;
  /** `sesTracking`: the local SES's open and click tracking host, where tracked links and pixels point. */
  endpoints: { dynamodb: string; sqs: string; ses: string; sesTracking: string; s3: string };
  /** The bucket attachments and large bodies are kept in (in the S3 emulator). */
  contentBucket: string;
  /** Calls the emulators received so far, by operation (what the same traffic costs on AWS). */
  awsCalls(): Promise<Record<string, number>>;
  /** Set when the viewer port asked for was taken and a free one was used instead. */
  viewerPortTaken?: number;
  /** SES's inbound SMTP endpoint, locally: mail to domains with receiving enabled (local/inbound-smtp.ts). */
  inboundSmtp: { host: string; port: number };
  /** Set when the inbound SMTP port asked for was taken and a free one was used instead. */
  inboundSmtpPortTaken?: number;
  /** The SMTP relay (local/smtp-relay.ts): STARTTLS on `port`, implicit TLS on `tlsPort`; `…Taken`: a default port was taken. */
  smtpRelay: { host: string; port: number; tlsPort: number; portTaken?: number; tlsPortTaken?: number };
  /** The send pipeline's local timings (the sweeper's bounds among them). */
  timings: SendTimings;
  /** Pauses or resumes sending for the account, as SES does for an account under review. */
  setSesSendingPaused(paused: boolean): Promise<void>;
  /** Runs a scheduled function now (one of SCHEDULED_FUNCTIONS: `check-domains`, `sweep-emails`…), as its timer would. */
  runScheduled(functionName: (typeof LOCAL_SCHEDULES)[number]): Promise<unknown>;
  /** CloudFormation's later events for receiving's custom resource: a deploy (Update), the stack's deletion (Delete). */
  receivingResource(requestType: 'Update' | 'Delete'): Promise<void>;
  /** Resolves when no send, event or consumer batch is in progress (for tests and benchmarks). */
  idle(): Promise<void>;
  /** The request-log lines the API functions emitted so far, and the bytes CloudWatch Logs would bill. */
  requestLogsIngested(): { lines: number; bytes: number };
  stop(): Promise<void>;
}

const CONFIGURATION_SET = LOCAL_CONFIGURATION_SET;
/** Where a local tracking subdomain's CNAME points: the local SES serves tracking itself. */
const LOCAL_TRACKING_TARGET = 'tracking.email-service.localhost';
const CONTENT_BUCKET = 'email-service-content';
/** The stack's maxReceiveCount for the webhook queue: every attempt of the schedule, and two spare. */
const WEBHOOK_MAX_RECEIVES = MAX_ATTEMPTS + 2;

/** The scheduled functions: the every-minute ones, and receiving's sweep (every 5 minutes on AWS). */
const LOCAL_SCHEDULES = [...SCHEDULED_FUNCTIONS, 'sweep-received'] as const;

/**
 * The whole service on this machine, from the same handler modules Lambda runs: embedded
 * emulators, the table and queues as the stack defines them, an HTTPS gateway built from the route
 * table, pollers in place of the SQS event sources, and SES event publishing in place of SES's.
 */
export async function startLocalService(options: LocalServiceOptions = {}): Promise<LocalService> {
  const dataDir = options.dataDir === undefined ? '.local-data' : options.dataDir;
  // The pinned SDK runs on Node 20; its notice about future releases needing Node 22 is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const timings = localTimings(options);
  const faults = options.faults ?? {};
  // A marker that only a clean stop removes: found at a start, the last run was killed (or is
  // still running, which its process id in the marker tells).
  const runningMarker = dataDir ? join(dataDir, 'running') : undefined;
  const killed = runningMarker !== undefined && existsSync(runningMarker) && !stillRunning(runningMarker);
  if (runningMarker) {
    mkdirSync(dataDir as string, { recursive: true });
    writeFileSync(runningMarker, String(process.pid));
  }
  const emulatorOptions = {
    dataDir: dataDir ? join(dataDir, 'dynamodb') : undefined,
    sesPort: options.viewerPort ?? 8005,
    sesPortRequired: options.viewerPortRequired,
    faults,
    buckets: [CONTENT_BUCKET],
    s3Dir: dataDir ? join(dataDir, 's3') : undefined,
  };
  // Threaded, the local SES runs with the emulators too (startSes).
  const emulators: Emulators & { startSes?: (settings: SesStandInSettings) => Promise<LocalSes> } =
    options.threads ? await startEmulatorsThread(emulatorOptions) : await startEmulators(emulatorOptions);
  const stopFaults = injectClientFaults(faults);
  // Each function's S3 and SES calls name it, so the stand-ins answer as AWS answers its role.
  const stopIdentity = identifyCallers();
  const viewerMoved = emulators.viewerPortTaken;
  if (viewerMoved !== undefined)
    options.log?.(`port ${viewerMoved} was taken; the sent-mail viewer is at ${emulators.sesEndpoint}`);
  const stops: (() => Promise<void>)[] = [
    async () => {
      stopFaults();
      stopIdentity();
      await emulators.stop();
    },
  ];
  try {
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const region = 'us-east-1';
    const dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region, credentials });
    const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region, credentials });
    await ensureTable(dynamodb, TABLE_NAME, dataDir ? join(dataDir, 'table-move.json') : undefined);
    const { send, lane, laneUrls, laneSettings } = await ensureSendQueues(sqs, timings);
    const events = await ensureQueueWithDlq(sqs, 'email-service-ses-events', {
      maxReceiveCount: timings.eventsMaxAttempts,
      visibilityTimeoutSeconds: timings.eventsVisibilitySeconds,
    });
    // The webhook delivery queue: as on AWS, SQS hides a failed attempt's message until a short
    // retry; longer ones are parked in the table, and the sweep timer below queues them again.
    const webhooks = await ensureQueueWithDlq(sqs, 'email-service-webhooks', {
      maxReceiveCount: WEBHOOK_MAX_RECEIVES,
      visibilityTimeoutSeconds: 60,
    });
    const receiving = await ensureReceivingQueues(sqs, region);
    const audience = await ensureAudienceQueues(sqs);
    const port = await gatewayPort(options.port ?? 3000); // Before any function loads: PUBLIC_ORIGIN.
    const sesSettings: SesStandInSettings = {
      eventsQueueUrl: events.queue.url,
      eventDelayMs: options.eventDelayMs,
      identities: {
        verifyAfterMs: options.domainVerifyMs,
        failAfterMs: options.domainFailMs,
        file: dataDir ? join(dataDir, 'ses', 'identities.json') : undefined,
        region,
      },
      ledgerFile: dataDir ? join(dataDir, 'ses', 'sent.jsonl') : undefined,
      configurationSets: {
        stack: [CONFIGURATION_SET],
        maxDeliverySeconds: timings.maxDeliverySeconds,
        file: dataDir ? join(dataDir, 'ses', 'configuration-sets.json') : undefined,
      },
      trackingPort: options.trackingPort ?? (emulatorOptions.sesPort ? emulatorOptions.sesPort + 1 : 0),
      faults,
      account: {
        ...options.sesAccount,
        ...(faults.ses?.quotaSpentForMs ? { quotaSpentForMs: faults.ses.quotaSpentForMs } : {}),
      },
    };
    const ses: LocalSes = emulators.startSes
      ? await emulators.startSes(sesSettings)
      : await startSesHere({
          ...sesSettings,
          emulatorEndpoint: emulators.sesEndpoint,
          // Built like the functions' clients, so the benchmark counts what SES publishes (SNS to SQS on AWS).
          sqs: newSqsClient({ endpoint: emulators.sqsEndpoint, region, credentials }),
          log: options.log,
        });
    stops.unshift(() => ses.stop());
    // The HTTPS front for tracking hosts, which a domain's host must pass before its set takes it.
    const front = await startLocalTrackingFront({ origin: ses.trackingUrl });
    stops.unshift(() => front.stop());
    const secrets = await startLocalUnsubscribeKeys(dataDir, stops);
    // The handlers build their clients from the environment, as on Lambda.
    Object.assign(process.env, {
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
      // The host fauxqs puts in queue URLs, so the SDK sees one origin (see emulators.ts).
      AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint.replace('127.0.0.1', 'sqs.us-east-1.localhost'),
      AWS_ENDPOINT_URL_SESV2: ses.endpoint,
      // SES v1 (receipt rules): the same local SES.
      AWS_ENDPOINT_URL_SES: ses.endpoint,
      ...receiving.settings,
      // Path-style (adapters/s3/client.ts): presigned download links point at this, on 127.0.0.1.
      AWS_ENDPOINT_URL_S3: emulators.s3Endpoint,
      CONTENT_BUCKET,
      // Files served by a server on this machine (http://localhost:…); private networks stay refused.
      ATTACHMENT_ALLOW_LOOPBACK: process.env.ATTACHMENT_ALLOW_LOOPBACK ?? 'true',
      TABLE_NAME,
      SEND_QUEUE_URL: send.queue.url,
      SEND_DEAD_LETTER_QUEUE_URL: send.dlq.url,
      ...laneSettings,
      CONFIGURATION_SET_NAME: CONFIGURATION_SET,
      // Domains' own configuration sets: named as the stack names them, their events to the same
      // queue as the stack's set (the local SES maps this topic to the events queue), and the
      // stack's delivery time as close as SES's API allows (its least is 300 s).
      DOMAIN_CONFIGURATION_SET_PREFIX: `${CONFIGURATION_SET}-`,
      SES_EVENTS_TOPIC_ARN: LOCAL_EVENTS_TOPIC_ARN,
      SES_MAX_DELIVERY_SECONDS: String(Math.max(300, timings.maxDeliverySeconds)),
      // Tracking subdomains as on a stack with the HTTPS front, and DNS as if every record the
      // service asks for were published: nothing is published anywhere from a laptop.
      TRACKING_HTTPS_TARGET: LOCAL_TRACKING_TARGET,
      LOCAL_DNS_PUBLISHED: 'true',
      LOCAL_TRACKING_FRONT: front.url,
      LOCAL_TRACKING_FRONT_CA: front.ca,
      // A domain's new settings reach the next send, not within the minute each instance keeps them on AWS.
      SENDER_OPTIONS_TTL_MS: String(options.senderOptionsTtlMs ?? 0),
      // Likewise a publish reaches the next send by template (a second on AWS).
      TEMPLATE_CACHE_TTL_MS: '0',
      WEBHOOK_QUEUE_URL: webhooks.queue.url,
      ...audience.settings,
      PUBLIC_ORIGIN: `https://localhost:${port}`, // The unsubscribe links' origin; their keys: the twin's.
      ...secrets.settings,
      // Development receivers on this machine (http://localhost:…); private networks stay refused.
      WEBHOOK_ALLOW_LOOPBACK: process.env.WEBHOOK_ALLOW_LOOPBACK ?? 'true',
      ...timingSettings(timings),
      SWEEP_OLD_CHECK_EVERY_MS: String(Math.min(60_000, timings.finalEventsAfterMs / 4)),
      RATE_LIMIT_PER_SECOND: String(options.rateLimitPerSecond ?? 10),
      DEFLATE_BODIES: process.env.DEFLATE_BODIES ?? 'true',
      REQUEST_LOG_BODIES: String(options.requestLogBodies ?? process.env.REQUEST_LOG_BODIES ?? 'true'),
      // Metrics are CloudWatch's (embedded metric format lines): locally they would only be noise.
      POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    });
    delete process.env.AWS_PROFILE;
    // Every function's settings, checked now as each Lambda's init checks its own: a bad one
    // (WEBHOOK_ALLOW_LOOPBACK=1, say) stops the start with a message naming it.
    checkSettings();
    // The logger was built when this module was imported, perhaps before its caller set LOG_LEVEL.
    logger.setLogLevel(configuredLogLevel());

    const db = createDocumentClient(dynamodb);
    const apiKey = await issueDevKey(db, options.apiKey);
    // Every step of it can be taken again, so a throttled read (DynamoDB's answer to a burst, as
    // LOCAL_FAULTS injects) retries the whole of it rather than stop the start.
    for (let attempt = 1; ; attempt++) {
      try {
        await recoverFromLastRun(db, ses, killed, options.log, { sqs, url: audience.urls.broadcastFanOut });
        break;
      } catch (error) {
        if (!isThrottling(error) || attempt >= 5) throw error;
        options.log?.('recovery throttled by DynamoDB; trying again', { attempt });
        await pause(250 * attempt);
      }
    }

    const load = async <T>(name: string) => (await import(`../functions/handlers/${name}.ts`)).handler as T;
    const handlers: Record<string, HttpLambda> = {};
    for (const route of ROUTES) handlers[route.handler] = await load<HttpLambda>(route.handler);
    const consumerOptions = {
      queues: {
        send: { url: send.queue.url, arn: send.queue.arn },
        lane: { url: lane.queue.url, arn: lane.queue.arn },
        events: { url: events.queue.url, arn: events.queue.arn },
        webhooks: { url: webhooks.queue.url, arn: webhooks.queue.arn },
        receiptRules: receiving.receiptRules,
      },
      audience: audience.consumed,
      events: {
        batchSize: timings.eventsBatchSize,
        batchWindowMs: timings.eventsBatchWindowMs,
        timeoutMs: timings.eventsConsumerTimeoutSeconds * 1000,
        visibilityTimeoutSeconds: timings.eventsVisibilitySeconds,
      },
      // As many consumer invocations at once as the stack allows by default; they share one
      // schedule at the local SES's rate, as on AWS.
      send: {
        concurrency: options.sendConcurrency ?? 5,
        timeoutMs: timings.consumerTimeoutSeconds * 1000,
        visibilityTimeoutSeconds: timings.sendVisibilitySeconds,
      },
      duplicateDelivery: faults.sendQueue?.duplicateDelivery,
    };
    // On a thread of their own, the consumers build their clients from the environment set above.
    const consumers = options.threads
      ? await startConsumersThread(consumerOptions)
      : await startConsumers({ ...consumerOptions, log: options.log });
    stops.unshift(() => consumers.stop());
    // Every scheduled function on its timer: the domain check at its interval, the other jobs at the sweep's.
    const schedules = new Map(
      await Promise.all(
        LOCAL_SCHEDULES.map(
          async (name) =>
            [
              name,
              startSchedule(
                name,
                await load<ScheduledHandler>(name),
                name === 'check-domains'
                  ? (options.domainCheckIntervalMs ?? 1000)
                  : (options.sweepIntervalMs ?? 1000),
                options.log,
              ),
            ] as const,
        ),
      ),
    );
    stops.unshift(async () => {
      await Promise.all([...schedules.values()].map((schedule) => schedule.stop()));
    });

    // The API functions' request-log lines, to the writer as their log groups' subscriptions would.
    const requestLogs = startRequestLogSubscription({
      writer: await load<Parameters<typeof startRequestLogSubscription>[0]['writer']>('write-request-logs'),
      log: options.log,
    });
    stops.unshift(() => requestLogs.stop());

    // SES receiving: the custom resource as a deploy runs it, a rule sync, the inbound SMTP endpoint.
    const smtp = await startLocalReceiving({
      region,
      sqs,
      queues: receiving,
      s3Endpoint: emulators.s3Endpoint,
      bucket: CONTENT_BUCKET,
      port: options.inboundSmtpPort ?? 2525,
      portRequired: options.inboundSmtpPortRequired,
      acceptsRecipient: (address) => ses.acceptsRecipient(address),
      load,
      resourceFile: dataDir ? join(dataDir, 'ses', 'receiving-resource.json') : undefined,
      log: options.log,
    });
    stops.unshift(() => smtp.stop());

    const tls = await localTls(dataDir ? join(dataDir, 'tls') : undefined);
    const gateway = await startHttpsGateway({
      tls,
      port,
      handlers,
      fallback: await load<HttpLambda>(FALLBACK_HANDLER),
      log: options.log,
      onAnswer: options.onRequest,
    });
    stops.unshift(() => gateway.stop());
    // The SMTP relay: apps that speak only SMTP send through the same pipeline (issue 42).
    const relay = await startLocalSmtpRelay({
      tls,
      port: options.smtpRelayPort,
      portRequired: options.smtpRelayPortRequired,
      tlsPort: options.smtpRelayTlsPort,
      tlsPortRequired: options.smtpRelayTlsPortRequired,
    });
    stops.unshift(() => relay.stop());
    // Started in full: a clean stop now removes the marker (after the table is closed); a failed start keeps it (next start: killed).
    stops.push(async () => {
      if (runningMarker) rmSync(runningMarker, { force: true });
    });

    return {
      baseUrl: `https://localhost:${gateway.port}/v1`,
      apiKey,
      viewerUrl: emulators.sesEndpoint,
      ...(emulators.viewerPortTaken === undefined ? {} : { viewerPortTaken: emulators.viewerPortTaken }),
      inboundSmtp: { host: '127.0.0.1', port: smtp.port },
      ...(smtp.portTaken === undefined ? {} : { inboundSmtpPortTaken: smtp.portTaken }),
      smtpRelay: (({ relay: _, stop: __, ...ports }) => ports)(relay),
      certificate: tls.cert,
      certificatePath: tls.certPath,
      tableName: TABLE_NAME,
      sendQueueUrl: send.queue.url,
      queues: {
        send: send.queue.url,
        sendDeadLetters: send.dlq.url,
        ...laneUrls,
        events: events.queue.url,
        eventsDeadLetters: events.dlq.url,
        webhooks: webhooks.queue.url,
        webhookDeadLetters: webhooks.dlq.url,
        ...receiving.urls,
        ...audience.urls,
      },
      endpoints: {
        dynamodb: emulators.dynamodbEndpoint,
        sqs: emulators.sqsEndpoint,
        ses: ses.endpoint,
        sesTracking: ses.trackingUrl,
        s3: emulators.s3Endpoint,
      },
      contentBucket: CONTENT_BUCKET,
      awsCalls: () => emulators.calls(),
      timings,
      setSesSendingPaused: (paused) => ses.setSendingPaused(paused),
      runScheduled(functionName) {
        const schedule = schedules.get(functionName);
        if (!schedule) throw new Error(`no scheduled function ${functionName}`);
        return schedule.runNow();
      },
      requestLogsIngested: () => requestLogs.ingested(),
      receivingResource: (requestType) => smtp.customResource(requestType),
      async idle() {
        // Quiet means: no event waiting to be published, no batch being handled, no message in
        // the send, events or audience queues (visible or in flight). Events trigger consumers and
        // back, so check twice.
        const deadline = Date.now() + 60_000;
        let quietRounds = 0;
        while (quietRounds < 2 && Date.now() < deadline) {
          await requestLogs.flush();
          await ses.idle();
          await smtp.idle();
          await consumers.idle();
          let waiting = 0;
          for (const { queue } of [send, lane, events, ...audience.consumed])
            waiting += await queueDepth(sqs, queue.url);
          quietRounds = waiting === 0 && !(await ses.busy()) ? quietRounds + 1 : 0;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (quietRounds < 2) throw new Error('the local service did not become idle within 60 s');
      },
      stop: () => stopAll(stops),
    };
  } catch (error) {
    await stopAll(stops);
    throw error;
  }
}

async function stopAll(stops: (() => Promise<void>)[]) {
  for (const stop of stops.splice(0)) await stop().catch(() => undefined);
}
