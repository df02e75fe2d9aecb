import { newSesClient, newSqsClient } from './adapters/aws-clients.js';
import { PublicDns, PublishedDns } from './adapters/dns/public-dns.js';
import {
  apiKeyRepository,
  broadcastTally,
  domainRepository,
  emailRepository,
  idempotencyStore,
  metricsStore,
  openTable,
  type RepositoryFactories,
  receiptRuleSetStates,
  repositoriesOf,
  requestLogRepository,
  suppressionRepository,
  sweepStore,
  type Table,
  templateRepository,
  unpublishedEventStore,
  unpublishedEventStoreByPut,
  webhookBreakerRepository,
  webhookHoldStore,
  webhookRepository,
  webhookRetryStore,
} from './adapters/dynamodb/repositories.js';
import { trackingFrontOnFirstUse } from './adapters/http/tracking-front-on-first-use.js';
import { createSesConfigurationSets } from './adapters/ses/configuration-sets.js';
import { createSesIdentities } from './adapters/ses/identities.js';
import { SesSuppressions } from './adapters/ses/suppressions.js';
import { SqsDeliveryQueue } from './adapters/sqs/delivery-queue.js';
import { SqsDeadLetters, SqsEmailQueue } from './adapters/sqs/email-queue.js';
import { emailQueueOnFirstUse } from './adapters/sqs/email-queue-on-first-use.js';
import { SqsReceiptRuleSync } from './adapters/sqs/receipt-rule-sync.js';
import { shardCount } from './api-keys/rate-limit.js';
import { FUNCTIONS, type FunctionSpec } from './catalog.js';
import type { DomainDeps } from './domains/domains.js';
import { verifiedSenderDomains } from './domains/domains.js';
import { receivesIn } from './domains/receiving-regions.js';
import type { SchedulerDeps } from './emails/scheduler.js';
import type { SweepDeps } from './emails/sweep.js';
import type { MetricsRollUp } from './metrics/ports.js';
import { log } from './observability/logger.js';
import { counters } from './observability/metrics.js';
import { countersLoadedAtInit } from './observability/metrics-at-init.js';
import { requestLogSink } from './observability/request-log-sink.js';
import { loadConfig } from './shared/config.js';
import { type Clock, systemClock } from './shared/ports.js';
import { cachedForSends } from './templates/cache.js';
import type { TendHeldDeps } from './webhooks/held.js';
import type { UnpublishedEvents, WebhookRepository } from './webhooks/ports.js';
import { WebhookPublisher } from './webhooks/publish.js';
import type { RepublishDeps } from './webhooks/republish.js';
import type { RequeueRetriesDeps } from './webhooks/retries.js';

/**
 * Where every function's dependencies are built, once per container, from the settings each wiring
 * names (`loadConfig('TABLE_NAME', …)`): test/infra/environment.test.ts holds what a function's
 * wiring reads equal to its catalog entry (functions/catalog.ts), which the stack sets. No function
 * loads the catalog itself. Handlers take what these return and nothing else.
 */

/**
 * Every function's settings, read as each one's init reads them: throws a ConfigurationError naming
 * the first setting that is missing or invalid (the local runtime calls it when it starts).
 */
export function checkSettings(): void {
  for (const spec of Object.values(FUNCTIONS) as FunctionSpec[])
    loadConfig(...spec.env, ...(spec.optionalEnv ?? []));
}

/** The functions behind the API routes (and the fallback). */
export type ApiFunction = Exclude<
  keyof typeof FUNCTIONS,
  | 'process-send-queue'
  | 'process-ses-events'
  | 'check-domains'
  | 'dispatch-scheduled'
  | 'sweep-emails'
  | 'requeue-webhook-retries'
  | 'roll-up-metrics'
  | 'deliver-webhooks'
  | PublicFunction
  | 'write-request-logs'
>;
type PublicFunction = 'get-openapi' | 'get-api-reference' | 'get-console' | 'get-console-asset';
type DomainFunction = 'create-domain' | 'get-domain' | 'verify-domain' | 'update-domain' | 'delete-domain';

/** A public page's function (routes.ts): it reads no setting. */
export function publicDeps(_name: PublicFunction) {
  return { log };
}

/**
 * An API function: the API keys (every request's key is checked), the repositories it names (a
 * factory each, from adapters/dynamodb/repositories.ts: its bundle holds those and no others), the
 * clock, the per-key rate limit, logs and metrics.
 */
export function apiDeps<R extends RepositoryFactories = Record<never, never>>(
  _name: ApiFunction,
  repositories: R = {} as R,
  options: { deflateBodies?: boolean } = {},
) {
  const { TABLE_NAME, RATE_LIMIT_PER_SECOND, REQUEST_LOGS, REQUEST_LOG_BODIES } = loadConfig(
    'TABLE_NAME',
    'RATE_LIMIT_PER_SECOND',
    'REQUEST_LOGS',
    'REQUEST_LOG_BODIES',
  );
  const requestLogsOff = REQUEST_LOGS === 'false';
  const table = openTable(TABLE_NAME, undefined, {
    deflateBodies: options.deflateBodies,
    keyRateShards: shardCount(RATE_LIMIT_PER_SECOND),
  });
  return {
    ...repositoriesOf(table, repositories),
    apiKeys: apiKeyRepository(table),
    /** The table, for wiring that builds more on it. */
    table,
    clock: systemClock,
    rateLimit: { perSecond: RATE_LIMIT_PER_SECOND },
    // Every answered request's log line (stdout on Lambda; see observability/request-log-sink.ts),
    // unless the stack turned request logs off: then no line, and the log routes say they are off.
    requestLog: requestLogsOff ? undefined : requestLogSink,
    requestLogBodies: REQUEST_LOG_BODIES === 'true',
    requestLogsOff,
    log,
    counters,
  };
}

/** The request-log writer: the table, and how long logs are kept. */
export function requestLogWriterDeps() {
  const { TABLE_NAME, LOG_RETENTION_DAYS, REQUEST_LOG_BODIES } = loadConfig(
    'TABLE_NAME',
    'LOG_RETENTION_DAYS',
    'REQUEST_LOG_BODIES',
  );
  return {
    requestLogs: requestLogRepository(openTable(TABLE_NAME)),
    retentionDays: LOG_RETENTION_DAYS,
    bodies: REQUEST_LOG_BODIES === 'true',
    log,
  };
}

/** The stack's region, where its SES identities are (Lambda sets AWS_REGION; so does the local service). */
export const stackRegion = (): string => process.env.AWS_REGION ?? 'us-east-1';

/**
 * Where a function's events go: every webhook endpoint subscribed to them, through the delivery
 * queue (the endpoints read afresh for each event raised).
 */
/** The webhooks' publisher; `unpublished`: where events that could not be published are kept. */
export function eventPublisher(
  webhooks: WebhookRepository,
  queueUrl: string,
  unpublished: UnpublishedEvents,
) {
  return new WebhookPublisher({
    webhooks,
    queue: new SqsDeliveryQueue(newSqsClient(), queueUrl),
    counters,
    unpublished,
  });
}

/**
 * What keeps a domain's own settings: its SES configuration set (named by the stack's prefix, with
 * the stack's event destination and delivery time), the DNS its tracking records are looked up in,
 * and where a tracking CNAME points (the HTTPS front; none: no tracking subdomains).
 */
function domainSending(): NonNullable<DomainDeps['sending']> {
  const config = loadConfig(
    'TABLE_NAME',
    'SES_EVENTS_TOPIC_ARN',
    'SES_MAX_DELIVERY_SECONDS',
    'DOMAIN_CONFIGURATION_SET_PREFIX',
    'TRACKING_HTTPS_TARGET',
    'LOCAL_DNS_PUBLISHED',
    'LOCAL_TRACKING_FRONT',
    'LOCAL_TRACKING_FRONT_CA',
  );
  const target = config.TRACKING_HTTPS_TARGET;
  // Locally every tracking host is served by the local front, over its own CA; on AWS, port 443
  // of public addresses only, with Node's CAs.
  const local = config.LOCAL_TRACKING_FRONT ? new URL(config.LOCAL_TRACKING_FRONT) : undefined;
  return {
    configurationSets: createSesConfigurationSets({
      eventsTopicArn: config.SES_EVENTS_TOPIC_ARN,
      maxDeliverySeconds: config.SES_MAX_DELIVERY_SECONDS,
      owner: config.TABLE_NAME,
    }),
    dns:
      config.LOCAL_DNS_PUBLISHED === 'true' && target
        ? new PublishedDns(target, stackRegion())
        : new PublicDns(),
    ...(target ? { trackingTarget: target } : {}),
    front: local
      ? trackingFrontOnFirstUse(
          { allowLoopback: true },
          {
            port: Number(local.port),
            resolve: async () => [{ address: local.hostname, family: 4 }],
            ...(config.LOCAL_TRACKING_FRONT_CA ? { ca: config.LOCAL_TRACKING_FRONT_CA } : {}),
          },
        )
      : trackingFrontOnFirstUse({ allowLoopback: false }),
    configurationSetName: (id) => `${config.DOMAIN_CONFIGURATION_SET_PREFIX}${id}`,
  };
}

/**
 * A domain function's side of receiving, where the stack's Region receives: the DNS its `Receiving`
 * record is looked up in, the receipt-rule writer's view of the active rule set, and for the
 * functions that change a domain's receiving (`syncs`), the writer's queue (RECEIPT_RULES_QUEUE_URL).
 */
function domainReceiving(table: Table, syncs: boolean): DomainDeps['receiving'] {
  const config = loadConfig('LOCAL_DNS_PUBLISHED', 'TRACKING_HTTPS_TARGET');
  const queueUrl = syncs ? loadConfig('RECEIPT_RULES_QUEUE_URL').RECEIPT_RULES_QUEUE_URL : undefined;
  const region = stackRegion();
  if (!receivesIn(region)) return undefined;
  return {
    ...(queueUrl ? { sync: new SqsReceiptRuleSync(newSqsClient(), queueUrl) } : {}),
    ruleSets: receiptRuleSetStates(table),
    dns:
      config.LOCAL_DNS_PUBLISHED === 'true'
        ? new PublishedDns(config.TRACKING_HTTPS_TARGET, region)
        : new PublicDns(),
  };
}

/** The domain functions: the above, SES identities and configuration sets, and their events. */
export function domainApiDeps(name: DomainFunction) {
  const deps = apiDeps(name, {
    domains: domainRepository,
    webhooks: webhookRepository,
    unpublished: unpublishedEventStoreByPut,
  });
  const { TABLE_NAME, WEBHOOK_QUEUE_URL } = loadConfig('TABLE_NAME', 'WEBHOOK_QUEUE_URL');
  return {
    ...deps,
    identities: createSesIdentities(TABLE_NAME),
    sending: domainSending(),
    receiving: domainReceiving(deps.table, name !== 'get-domain' && name !== 'verify-domain'),
    events: eventPublisher(deps.webhooks, WEBHOOK_QUEUE_URL, deps.unpublished),
    region: stackRegion(),
  } satisfies DomainDeps;
}

/** list-domains: the table, and the region its domains are in (it calls no SES). */
export const listDomainsDeps = () => ({
  ...apiDeps('list-domains', { domains: domainRepository }),
  region: stackRegion(),
});

export function replayDeps() {
  const deps = apiDeps('replay-webhook-event', { webhooks: webhookRepository });
  const { WEBHOOK_QUEUE_URL } = loadConfig('WEBHOOK_QUEUE_URL');
  return { ...deps, queue: new SqsDeliveryQueue(newSqsClient(), WEBHOOK_QUEUE_URL) };
}

/** The functions that take addresses off the suppression list: the above, and SES's own list. */
export function suppressionDeps(name: 'delete-suppression' | 'batch-remove-suppressions') {
  return {
    ...apiDeps(name, { suppressions: suppressionRepository }),
    providerSuppressions: new SesSuppressions(newSesClient()),
  };
}

/** send-email: the above, the send queue, and the verified sender domains (remembered a minute). */
export function sendEmailDeps(name: 'send-email' | 'send-batch' = 'send-email') {
  const { SEND_QUEUE_URL, TEMPLATE_CACHE_TTL_MS, DEFLATE_BODIES } = loadConfig(
    'SEND_QUEUE_URL',
    'TEMPLATE_CACHE_TTL_MS',
    'DEFLATE_BODIES',
  );
  const deps = apiDeps(
    name,
    {
      emails: emailRepository,
      idempotency: idempotencyStore,
      templates: templateRepository,
      domains: domainRepository,
      sweep: sweepStore,
    },
    // New emails' bodies over 1 KB are stored deflated unless the stack says otherwise.
    { deflateBodies: DEFLATE_BODIES !== 'false' },
  );
  return {
    ...deps,
    // Published templates kept a second per instance: one a whole load sends with is no hot item.
    templates: cachedForSends(deps.templates, deps.clock, TEMPLATE_CACHE_TTL_MS),
    queue: new SqsEmailQueue(newSqsClient(), SEND_QUEUE_URL),
    assertSenderDomain: verifiedSenderDomains(deps.domains, deps.clock),
    // Every send counts what it accepted.
    counters: countersLoadedAtInit(),
  };
}

/** PATCH /v1/emails/{id}: the API's, and the send queue (a rescheduled email due soon is queued at once). */
export function scheduleChangeDeps() {
  const { SEND_QUEUE_URL } = loadConfig('SEND_QUEUE_URL');
  return {
    ...apiDeps('update-email', { emails: emailRepository }),
    queue: emailQueueOnFirstUse(SEND_QUEUE_URL),
  };
}

/** The SES events consumer: the emails and the suppression list. */
export function eventsConsumerDeps() {
  const { TABLE_NAME, WEBHOOK_QUEUE_URL } = loadConfig('TABLE_NAME', 'WEBHOOK_QUEUE_URL');
  const { emails, suppressions, webhooks, metrics, unpublished, broadcasts } = repositoriesOf(
    openTable(TABLE_NAME),
    {
      emails: emailRepository,
      suppressions: suppressionRepository,
      webhooks: webhookRepository,
      metrics: metricsStore,
      unpublished: unpublishedEventStore,
      broadcasts: broadcastTally,
    },
  );
  return {
    emails,
    suppressions,
    metrics,
    broadcasts,
    events: eventPublisher(webhooks, WEBHOOK_QUEUE_URL, unpublished),
    log,
    counters: countersLoadedAtInit(),
  };
}

/** The scheduled domain check: the domains and SES identities. */
export function checkDomainsDeps(): DomainDeps {
  const { TABLE_NAME, WEBHOOK_QUEUE_URL } = loadConfig('TABLE_NAME', 'WEBHOOK_QUEUE_URL');
  const table = openTable(TABLE_NAME);
  const { domains, webhooks, unpublished } = repositoriesOf(table, {
    domains: domainRepository,
    webhooks: webhookRepository,
    unpublished: unpublishedEventStore,
  });
  return {
    domains,
    identities: createSesIdentities(TABLE_NAME),
    sending: domainSending(),
    receiving: domainReceiving(table, true),
    clock: systemClock,
    events: eventPublisher(webhooks, WEBHOOK_QUEUE_URL, unpublished),
    region: stackRegion(),
    log,
    counters,
  };
}

/** The sweeper: the queued emails, the send queue and its dead-letter queue, and its bounds. */
export function sweepDeps(): SweepDeps {
  const config = loadConfig(
    'TABLE_NAME',
    'WEBHOOK_QUEUE_URL',
    'SEND_QUEUE_URL',
    'SEND_DEAD_LETTER_QUEUE_URL',
    'BROADCAST_SEND_QUEUE_URL',
    'BROADCAST_LANE_DEAD_LETTER_QUEUE_URL',
    'SWEEP_REQUEUE_AFTER_MS',
    'SWEEP_BACKLOG_GRACE_MS',
    'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
    'SWEEP_FINAL_EVENTS_AFTER_MS',
    'SWEEP_OLD_CHECK_EVERY_MS',
    'SEND_MAX_RECEIVE_COUNT',
  );
  const sqs = newSqsClient();
  return {
    ...sweepParts(config),
    deadLetters: new SqsDeadLetters(sqs, config.SEND_DEAD_LETTER_QUEUE_URL),
    queue: new SqsEmailQueue(sqs, config.SEND_QUEUE_URL),
    // Stranded broadcast emails go back on their lane; its dead letters are read as the send queue's.
    lane: {
      queue: new SqsEmailQueue(sqs, config.BROADCAST_SEND_QUEUE_URL),
      deadLetters: new SqsDeadLetters(sqs, config.BROADCAST_LANE_DEAD_LETTER_QUEUE_URL),
    },
    settings: {
      requeueAfterMs: config.SWEEP_REQUEUE_AFTER_MS,
      backlogGraceMs: config.SWEEP_BACKLOG_GRACE_MS,
      unknownOutcomeAfterMs: config.SWEEP_UNKNOWN_OUTCOME_AFTER_MS,
      finalEventsAfterMs: config.SWEEP_FINAL_EVENTS_AFTER_MS,
      oldCheckEveryMs: config.SWEEP_OLD_CHECK_EVERY_MS,
      maxPerRun: 500,
      maxOldPerCheck: 5_000,
      maxDeadLettersPerRun: 100,
      maxAttempts: config.SEND_MAX_RECEIVE_COUNT,
    },
  };
}

/** The scheduler: the due index and the emails' states, the send queue, and the sweeper's rules' bounds. */
export function schedulerDeps(): SchedulerDeps {
  const config = loadConfig(
    'TABLE_NAME',
    'WEBHOOK_QUEUE_URL',
    'SEND_QUEUE_URL',
    'SWEEP_REQUEUE_AFTER_MS',
    'SWEEP_BACKLOG_GRACE_MS',
    'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
  );
  return {
    ...sweepParts(config),
    queue: new SqsEmailQueue(newSqsClient(), config.SEND_QUEUE_URL),
    settings: {
      requeueAfterMs: config.SWEEP_REQUEUE_AFTER_MS,
      backlogGraceMs: config.SWEEP_BACKLOG_GRACE_MS,
      unknownOutcomeAfterMs: config.SWEEP_UNKNOWN_OUTCOME_AFTER_MS,
    },
  };
}

/** What the sweeper and the scheduler both use: the emails, their store, the metrics and the webhooks. */
function sweepParts(config: { TABLE_NAME: string; WEBHOOK_QUEUE_URL: string }) {
  const repositories = repositoriesOf(openTable(config.TABLE_NAME), {
    emails: emailRepository,
    metrics: metricsStore,
    webhooks: webhookRepository,
    sweep: sweepStore,
    unpublished: unpublishedEventStore,
    broadcasts: broadcastTally,
  });
  return {
    emails: repositories.emails,
    metrics: repositories.metrics,
    // A broadcast's email ended unsent (dead-lettered, an unknown outcome) tells its tally.
    broadcasts: repositories.broadcasts,
    events: eventPublisher(repositories.webhooks, config.WEBHOOK_QUEUE_URL, repositories.unpublished),
    store: repositories.sweep,
    clock: systemClock,
    log,
    counters,
  };
}

/** The email metrics' roll-up of finished hours into day items. */
export function metricsRollUpDeps(): { metrics: MetricsRollUp; clock: Clock } {
  const { TABLE_NAME } = loadConfig('TABLE_NAME');
  return { metrics: metricsStore(openTable(TABLE_NAME)), clock: systemClock };
}

/**
 * Parked webhook retries that fell due, the messages paused endpoints held, and the events kept
 * because they could not be published when raised: back on the delivery queue.
 */
export function webhookRetryDeps(): RequeueRetriesDeps & TendHeldDeps & { republish: RepublishDeps } {
  const { TABLE_NAME, WEBHOOK_QUEUE_URL } = loadConfig('TABLE_NAME', 'WEBHOOK_QUEUE_URL');
  const table = openTable(TABLE_NAME);
  const { webhooks, unpublished } = repositoriesOf(table, {
    webhooks: webhookBreakerRepository,
    unpublished: unpublishedEventStore,
  });
  return {
    // Events that could not be published when raised (webhooks/republish.ts).
    republish: {
      unpublished,
      events: eventPublisher(webhooks, WEBHOOK_QUEUE_URL, unpublished),
      log,
      counters,
    },
    retries: webhookRetryStore(table),
    webhooks,
    held: webhookHoldStore(table),
    queue: new SqsDeliveryQueue(newSqsClient(), WEBHOOK_QUEUE_URL),
    clock: systemClock,
    log,
    counters,
  };
}
