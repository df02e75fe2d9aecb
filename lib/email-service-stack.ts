import { Annotations, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import {
  DEFAULT_RETENTION_DAYS,
  DEFAULT_SHARDS,
  layoutProblem,
  type TableLayout,
} from '../functions/adapters/dynamodb/email-keys.js';
import type { EnvKey } from '../functions/catalog.js';
import { type SendTimings, timingSettings } from '../functions/emails/send-timings.js';
import { DEFAULT_LOG_RETENTION_DAYS } from '../functions/request-logs/model.js';
import { AudienceWork } from './constructs/audience-work.js';
import { BroadcastWork } from './constructs/broadcast-work.js';
import { ConceptStacks } from './constructs/concept-stacks.js';
import { ContentBucket, DEFAULT_RECEIVED_RETENTION_DAYS } from './constructs/content-bucket.js';
import { DomainCheck } from './constructs/domain-check.js';
import { EmailApi } from './constructs/email-api.js';
import { EmailTable, type UpgradeStep } from './constructs/email-table.js';
import {
  FrontDoor,
  FrontDoorFirewall,
  type FrontDoorFirewallProps,
  frontDoorOrigin,
} from './constructs/front-door.js';
import { Monitoring } from './constructs/monitoring.js';
import { Receiving, receivingIn } from './constructs/receiving.js';
import { RequestLogs } from './constructs/request-logs.js';
import { SendPipeline } from './constructs/send-pipeline.js';
import {
  type DomainConfigurationSets,
  domainSetPattern,
  domainSetPrefixes,
  type FunctionLogging,
  type ServiceFunction,
} from './constructs/service-function.js';
import { SesEventsPipeline } from './constructs/ses-events.js';
import { type SmtpRelay, type SmtpRelayStackProps, smtpRelayOf } from './constructs/smtp-relay.js';
import { UnsubscribeKeys } from './constructs/unsubscribe-keys.js';
import { Webhooks } from './constructs/webhooks.js';
import { domainConfigurationSetPrefix, legacyDomainConfigurationSetPrefix } from './domain-set-prefixes.js';
import { requestLogRetention } from './request-log-retention.js';
import { eventSourceConcurrency, oversizedSendConcurrency } from './send-concurrency.js';
import { stackTimings } from './stack-timings.js';

export interface EmailServiceStackProps extends StackProps, SmtpRelayStackProps {
  /**
   * Most concurrent consumer invocations sending through SES (2 to 1,000, the SQS event source's
   * bounds), each taking up to `sendBatchSize` emails. Not the SES rate: every invocation books its
   * sends on one shared schedule at the account's rate (from SES's GetAccount, or `sesMaxSendRate`),
   * so any value stays within it, the sandbox's 1 per second included. Above what that rate needs
   * (lib/send-concurrency.ts) it sends no faster, only costs: the synth warns past twice that.
   * @default 5
   */
  readonly sendConcurrency?: number;
  /**
   * Recipients per second all send consumers together stay within, instead of the account's
   * maximum send rate read from SES (for an account whose rate other senders share).
   * @default the account's rate (GetAccount, read every 5 minutes)
   */
  readonly sesMaxSendRate?: number;
  /**
   * The send rate you expect SES to give the account (recipients per second), only to check
   * `sendConcurrency` against at synth: a warning when it is far above what this rate needs. Never
   * used to pace (the consumers keep to the rate SES reports).
   * @default sesMaxSendRate, else 100 (what the default concurrency is sized for)
   */
  readonly sesSendRate?: number;
  /**
   * Emails a send consumer invocation takes at once (1 to 100). The send schedule takes one write a
   * batch, about 1,000 a second, so it carries 1,000 × sendBatchSize emails a second: raise it past
   * about 8,000 emails a second. Above 10, the event source waits up to 1 s to fill a batch.
   * @default 10
   */
  readonly sendBatchSize?: number;
  /**
   * Attempts at one send before its message goes to the dead-letter queue and the email is `failed`.
   * @default 5
   */
  readonly sendMaxAttempts?: number;
  /**
   * Requests per second each API key may make, counted in the table so it holds across every
   * function instance; over it, 429 with Retry-After.
   * @default 10
   */
  readonly keyRateLimit?: number;
  /** API Gateway stage throttling (all keys together). @default 50 requests/s, burst 100 */
  readonly apiRateLimit?: number;
  readonly apiBurstLimit?: number;
  /**
   * How often pending domains are re-checked against SES (minutes); verified ones once an hour.
   * @default 1
   */
  readonly domainCheckMinutes?: number;
  /**
   * The host name of the HTTPS front for tracking subdomains (a CloudFront distribution in front of
   * SES's tracking host, with a certificate for each tracking host: docs/tracking.md). Absent:
   * open and click tracking work through SES's own host, and domains cannot set a tracking subdomain.
   */
  readonly trackingHttpsTarget?: string;
  /**
   * The optional front door: CloudFront, with a WAF rate limit per client address, in front of the
   * API, which is then closed behind it: its `execute-api` endpoint disabled, served at its own
   * custom domain (`originDomainName`, with the ACM certificate `originCertificateArn` in the API's
   * region), CloudFront's origin, whose every route passes only requests carrying CloudFront's
   * secret header. Off by default: see docs/operations.md, "Front door", for what to set up, what
   * it costs and what is exposed without it. Its web ACL lives in us-east-1: a stack there creates
   * it; elsewhere, give `webAclArn` (bin/app.ts deploys it in a companion stack).
   * @default off
   */
  readonly frontDoor?: FrontDoorFirewallProps & {
    readonly webAclArn?: string;
    readonly originDomainName: string;
    readonly originCertificateArn: string;
  };
  /**
   * Whether domains' configuration sets named by the prefix of versions before the stack name's
   * digest may still exist: they are granted too (sending with them, their events to the topic,
   * the check moving them to their new names and deleting them 30 days on) until this is turned
   * off (docs/operations.md, "Upgrading"). On by default, so a stack upgraded without reading the
   * notes keeps sending from its domains' old sets while the check moves them: the old prefix's
   * grants cover only sets named by it, which stacks made by this version never make.
   * @default true
   */
  readonly legacyDomainSets?: boolean;
  /** Where alarm notifications are also sent by email (SNS asks the address to confirm). @default none */
  readonly alarmEmail?: string;
  /**
   * Most concurrent webhook delivery invocations, each making up to 10 attempts side by side: the
   * bound on how hard the service calls its users' endpoints (at least 2).
   * @default 5
   */
  readonly webhookConcurrency?: number;
  /**
   * Partitions each listing index and the due index spread emails over (1 to 256): 32 carry 16,000
   * emails/s (docs/scale.md). Raise it, never lower it: emails in the shards above a lowered count
   * would drop out of lists. @default 32
   */
  readonly listingShards?: number;
  /**
   * Days an email (its status, content and events) is kept after it was created, or after its time
   * when scheduled; DynamoDB's TTL then deletes it. 0 keeps emails until deleted. @default 30
   */
  readonly emailRetentionDays?: number;
  /**
   * A step of the upgrade from a table made by a version before the keys-only time index (docs/operations.md,
   * "Upgrading"): 1, then 2, then none. @default none
   */
  readonly upgradeStep?: UpgradeStep;
  /**
   * Most concurrent SES events consumer invocations (2 to 1,000, the SQS event source's bounds),
   * each applying up to 100 events: how fast statuses follow SES's events under load. Events wait
   * in their queue beyond it, and nothing is lost.
   * @default 5
   */
  readonly sesEventsConcurrency?: number;
  /** Days attachments and large bodies are kept in the content bucket (at least 31). @default 31 */
  readonly contentRetentionDays?: number;
  /**
   * Days received mail (its items, raw message, bodies and attachments) is kept; only where the
   * stack receives (RECEIVING_REGIONS). @default 30
   */
  readonly receivedRetentionDays?: number;
  /** Whether mail SES flagged as a virus still offers its raw message and attachments for download. @default false */
  readonly receivedVirusDownloads?: boolean;
  /**
   * Whether new emails' bodies over 1 KB are stored deflated (a third to a tenth of the write units
   * of their body item). Versions before it cannot read such bodies back: keep it false while a
   * rollback to one must stay possible, and turn it on after. @default true
   */
  readonly deflateBodies?: boolean;
  /**
   * Days the API's request logs (`GET /v1/logs`) are kept before DynamoDB's TTL deletes them
   * (1 to 3,650); within `emailRetentionDays`, as is their copy in the API functions' log groups,
   * unless `requestLogsOutliveEmails` (docs/logs.md). @default 30
   */
  readonly logRetentionDays?: number;
  /**
   * The operator's choice to keep request logs (which show the emails' addresses, subjects and
   * content) `logRetentionDays` even when that is longer than `emailRetentionDays`. @default false
   */
  readonly requestLogsOutliveEmails?: boolean;
  /**
   * Whether request logs keep the requests' and answers' bodies (redacted, 8 KB each). Off: the
   * table and the log groups keep only the method, path, status, user agent, key id, timing and id.
   * @default true
   */
  readonly requestLogBodies?: boolean;
  /**
   * The API's request logs (`GET /v1/logs`, docs/logs.md). Off: no API function emits a log line,
   * no subscription filter and no writer are made, and the log routes answer 404 saying logs are
   * off (about a third of the AWS cost of an email is its requests' logs: docs/scale.md).
   * @default true
   */
  readonly requestLogs?: boolean;
  /**
   * Every function's log group's retention; the API functions' (which receive the request-log
   * lines) within the request logs' retention too. @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /** The least level functions log (Powertools' POWERTOOLS_LOG_LEVEL). @default 'INFO' */
  readonly logLevel?: FunctionLogging['level'];
}

/**
 * The whole service, composed: the table; SES's events pipeline (configuration set → SNS → SQS →
 * consumer); the send pipeline (queue → consumer → SES, and the sweeper); the HTTP API (a function
 * per route); the scheduled domain check; receiving, where SES receives; and the alarms and
 * dashboard watching all of it.
 * Every function is built from its entry in functions/catalog.ts and bound to what it needs.
 * This stack holds what is stateful or shared, and every function's log group; each concept's
 * functions are in a nested stack of their own (ConceptStacks; docs/architecture.md, "Stacks").
 */
export class EmailServiceStack extends Stack {
  public readonly table: EmailTable;
  public readonly sesEvents: SesEventsPipeline;
  public readonly send: SendPipeline;
  public readonly api: EmailApi;
  public readonly domainCheck: DomainCheck;
  /** The request logs' writer and its subscription filters (undefined when requestLogs is false). */
  public readonly requestLogs: RequestLogs | undefined;
  public readonly webhooks: Webhooks;
  /** The contact imports' and audience clean-up's queues and workers. */
  public readonly audience: AudienceWork;
  public readonly broadcasts: BroadcastWork;
  /** The unsubscribe links' signing keys and their rotation. */
  public readonly unsubscribeKeys: UnsubscribeKeys;
  /** Rolls the email metrics' finished hours up into day items, every minute. */
  public readonly metricsRollUp: ServiceFunction;
  public readonly content: ContentBucket;
  /** Receiving mail through SES; undefined where SES does not receive (or the Region is unknown at synth). */
  public readonly receiving: Receiving | undefined;
  public readonly monitoring: Monitoring;
  /** The front door, when it is on. */
  public readonly frontDoor?: FrontDoor;
  public readonly smtpRelay?: SmtpRelay; // ECS behind an NLB, when on
  /** The send pipeline's timings (queues, timeouts, the sweeper's bounds) and their invariants. */
  public readonly timings: SendTimings;
  /** The nested stack of each concept, holding its functions; their log groups stay here. */
  public readonly concepts: ConceptStacks;
  /** Every function of the stack, by handler (for inspection and tests; the stack itself looks none up). */
  public readonly functions: Record<string, LambdaFunction>;
  public readonly serviceFunctions: readonly ServiceFunction[];

  constructor(scope: Construct, id: string, props: EmailServiceStackProps = {}) {
    super(scope, id, props);
    const timings = stackTimings(props.sendMaxAttempts ?? 5);
    this.timings = timings;
    const logging: FunctionLogging = {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      level: props.logLevel ?? 'INFO',
    };
    const concurrency = eventSourceConcurrency(
      'sendConcurrency',
      props.sendConcurrency ?? 5,
      "It need not be low for a low SES rate: every consumer books its sends on one schedule at the account's rate (the sandbox's 1 per second too); sesMaxSendRate sets a lower one.",
    );
    const sendBatchSize = props.sendBatchSize ?? 10;
    if (!Number.isInteger(sendBatchSize) || sendBatchSize < 1 || sendBatchSize > 100)
      throw new Error(`sendBatchSize must be a whole number from 1 to 100, not ${sendBatchSize}`);
    const eventsConcurrency = eventSourceConcurrency('sesEventsConcurrency', props.sesEventsConcurrency ?? 5);
    for (const [key, rate] of [
      ['sesMaxSendRate', props.sesMaxSendRate],
      ['sesSendRate', props.sesSendRate],
    ] as const)
      if (rate !== undefined && !(rate > 0))
        throw new Error(`${key} must be a number of recipients per second above 0, not ${rate}`);
    // More consumers than SES's rate needs send no faster: they only cost (lib/send-concurrency.ts).
    const oversized = oversizedSendConcurrency({
      sendConcurrency: concurrency,
      sendBatchSize,
      sesSendRate: props.sesSendRate,
      sesMaxSendRate: props.sesMaxSendRate,
    });
    if (oversized) Annotations.of(this).addWarningV2('email-service:sendConcurrency', oversized);
    if (props.upgradeStep !== undefined && props.upgradeStep !== 1 && props.upgradeStep !== 2)
      throw new Error(
        `upgradeStep must be 1 or 2 (docs/operations.md, "Upgrading"), not ${props.upgradeStep}`,
      );
    this.table = new EmailTable(this, 'Data', { upgradeStep: props.upgradeStep });
    const layout: TableLayout = {
      shards: props.listingShards ?? DEFAULT_SHARDS,
      timeIndex: this.table.timeIndex,
      retentionDays: props.emailRetentionDays ?? DEFAULT_RETENTION_DAYS,
      ...(this.table.searchable ? {} : { searchOff: true as const }),
    };
    const logRetentionDays = props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
    if (!Number.isInteger(logRetentionDays) || logRetentionDays < 1 || logRetentionDays > 3650)
      throw new Error(`logRetentionDays must be a whole number from 1 to 3650, not ${logRetentionDays}`);
    const layoutError = layoutProblem(layout);
    if (layoutError) throw new Error(layoutError);
    const requestLogKeeping = requestLogRetention({
      requestLogs: props.requestLogs !== false,
      logRetentionDays: props.logRetentionDays,
      emailRetentionDays: layout.retentionDays,
      outliveEmails: props.requestLogsOutliveEmails === true,
      bodies: props.requestLogBodies !== false,
      functionLogRetention: logging.retention ?? RetentionDays.ONE_MONTH,
    });
    for (const warning of requestLogKeeping.warnings)
      Annotations.of(this).addWarningV2('email-service:request-log-retention', warning);
    // The settings functions read, as environment variables (each function gets those it reads).
    const settings: Partial<Record<EnvKey, string>> = {
      TABLE_LAYOUT: JSON.stringify(layout),
      ...(props.sesMaxSendRate === undefined ? {} : { SES_MAX_SEND_RATE: String(props.sesMaxSendRate) }),
      RATE_LIMIT_PER_SECOND: String(props.keyRateLimit ?? 10),
      LOG_RETENTION_DAYS: String(requestLogKeeping.tableDays),
      DEFLATE_BODIES: String(props.deflateBodies ?? true),
      // Absent: on (the API functions' default).
      ...(props.requestLogs === false ? { REQUEST_LOGS: 'false' } : {}),
      ...(props.requestLogBodies === false ? { REQUEST_LOG_BODIES: 'false' } : {}),
      ...timingSettings(timings),
      SWEEP_OLD_CHECK_EVERY_MS: String(60 * 60_000),
      SES_MAX_DELIVERY_SECONDS: String(timings.maxDeliverySeconds),
      ...(props.trackingHttpsTarget ? { TRACKING_HTTPS_TARGET: props.trackingHttpsTarget } : {}),
      RECEIVED_RETENTION_DAYS: String(props.receivedRetentionDays ?? DEFAULT_RECEIVED_RETENTION_DAYS),
      RECEIVED_VIRUS_DOWNLOADS: String(props.receivedVirusDownloads ?? false),
    };

    this.monitoring = new Monitoring(this, 'Monitoring', { alarmEmail: props.alarmEmail });
    this.concepts = new ConceptStacks(this, 'Concepts', {
      logging,
      requestLogLineRetention: props.requestLogs === false ? undefined : requestLogKeeping.lineLogGroups,
    });
    const functions = this.concepts;
    const table = this.table.table;
    this.content = new ContentBucket(this, 'Content', {
      retentionDays: props.contentRetentionDays,
      receivedRetentionDays: props.receivedRetentionDays,
    });
    const contentBucket = this.content.bucket;
    this.webhooks = new Webhooks(this, 'Webhooks', {
      resources: { table, settings },
      monitoring: this.monitoring,
      concurrency: props.webhookConcurrency,
      functions,
    });
    const webhookQueue = this.webhooks.queue;
    // The unsubscribe links' signing keys and their rotation, given to the functions that read them
    // (docs/operations.md, "Unsubscribe keys").
    this.unsubscribeKeys = new UnsubscribeKeys(this, 'UnsubscribeKeys', {
      functions,
      resources: { table, settings },
    });
    const unsubscribeKeys = this.unsubscribeKeys.secret;
    this.audience = new AudienceWork(this, 'Audience', {
      resources: { table, settings, webhookQueue, contentBucket, unsubscribeKeys },
      monitoring: this.monitoring,
      functions,
    });
    const { importQueue: contactImportQueue, cleanupQueue: audienceCleanupQueue } = this.audience;
    // Only where SES receives mail (functions/domains/receiving-regions.ts): elsewhere, nothing.
    this.receiving = receivingIn(this)
      ? new Receiving(this, 'Receiving', {
          resources: { table, settings, webhookQueue },
          bucket: contentBucket,
          monitoring: this.monitoring,
          functions,
        })
      : undefined;
    const receiptRuleQueue = this.receiving?.ruleQueue;
    this.sesEvents = new SesEventsPipeline(this, 'SesEvents', {
      resources: { table, settings, webhookQueue },
      timings,
      monitoring: this.monitoring,
      concurrency: eventsConcurrency,
      functions,
    });
    const configurationSet = this.sesEvents.configurationSet;
    const domainConfigurationSets: DomainConfigurationSets = {
      prefix: domainConfigurationSetPrefix(this.stackName),
      eventsTopic: this.sesEvents.topic,
      ...((props.legacyDomainSets ?? true)
        ? { legacyPrefix: legacyDomainConfigurationSetPrefix(this.stackName) }
        : {}),
    };
    for (const prefix of domainSetPrefixes(domainConfigurationSets))
      this.sesEvents.acceptFromConfigurationSets(domainSetPattern(prefix));
    const shared = { table, settings, webhookQueue, contentBucket, unsubscribeKeys };
    this.send = new SendPipeline(this, 'Send', {
      resources: { ...shared, configurationSet, domainConfigurationSets },
      timings,
      monitoring: this.monitoring,
      concurrency,
      batchSize: sendBatchSize,
      functions,
    });
    // The destination takes Open and Click events, and such a destination turns tracking on for
    // every email of the set unless the send turns it off (the consumer's code does): updated after
    // that code (after the consumer's stack), so no deploy sends an email tracked in between.
    this.sesEvents.eventDestination.node.addDependency(this.send.consumer.function);
    const broadcastSendQueue = this.send.laneQueue;
    this.broadcasts = new BroadcastWork(this, 'Broadcasts', {
      resources: { ...shared, broadcastSendQueue },
      monitoring: this.monitoring,
      functions,
    });
    const broadcastFanOutQueue = this.broadcasts.fanOutQueue;
    this.api = new EmailApi(this, 'Http', {
      resources: {
        ...shared,
        sendQueue: this.send.queue,
        configurationSet,
        domainConfigurationSets,
        receiptRuleQueue,
        contactImportQueue,
        audienceCleanupQueue,
        broadcastFanOutQueue,
        broadcastSendQueue,
      },
      monitoring: this.monitoring,
      functions,
      rateLimit: props.apiRateLimit,
      burstLimit: props.apiBurstLimit,
      accessLogRetention: logging.retention,
    });
    this.requestLogs =
      props.requestLogs === false
        ? undefined
        : new RequestLogs(this, 'RequestLogs', {
            resources: { table, settings },
            sources: [...this.api.functions.values()],
            functions,
            monitoring: this.monitoring,
            retentionDays: requestLogKeeping.tableDays,
          });
    this.domainCheck = new DomainCheck(this, 'Domains', {
      resources: { table, settings, webhookQueue, domainConfigurationSets, receiptRuleQueue },
      every: Duration.minutes(props.domainCheckMinutes ?? 1),
      functions,
    });
    this.metricsRollUp = functions
      .add('roll-up-metrics', { timeout: Duration.seconds(60) })
      .bind({ table, settings });
    this.metricsRollUp.runEvery(
      Duration.minutes(1),
      "Rolls the email metrics' finished hours up into day items",
    );
    const background = [
      this.send.consumer,
      this.send.laneConsumer,
      this.send.sweeper,
      this.send.scheduler,
      this.sesEvents.consumer,
      this.domainCheck.checker,
      this.webhooks.delivery,
      this.webhooks.retries,
      this.metricsRollUp,
    ];
    this.monitoring.watchFunctions(
      'Background',
      background,
      "The send consumer and the broadcast lane's, the sweeper, the scheduler, the SES events consumer, the domain check, webhook delivery and retries, and the metrics roll-up",
    );
    const { rotation } = this.unsubscribeKeys;
    const audienceBackground = [...this.audience.workers, rotation, ...this.broadcasts.workers];
    this.monitoring.watchFunctions(
      'AudienceBackground',
      audienceBackground,
      "The contact imports, the audience clean-up, the unsubscribe keys' rotation and the broadcasts' fan-out (an alarm watches 10 at most)",
    );

    this.serviceFunctions = [
      ...this.api.functions.values(),
      ...background,
      ...audienceBackground,
      ...(this.requestLogs ? [this.requestLogs.writer] : []),
      ...(this.receiving?.functions ?? []),
    ];
    this.functions = Object.fromEntries(this.serviceFunctions.map((fn) => [fn.name, fn.function]));

    if (props.frontDoor) {
      const webAclArn =
        props.frontDoor.webAclArn ??
        new FrontDoorFirewall(this, 'FrontDoorFirewall', props.frontDoor).webAcl.attrArn;
      const origin = frontDoorOrigin(props.frontDoor);
      this.frontDoor = new FrontDoor(this, 'FrontDoor', { api: this.api, webAclArn, ...origin });
    }
    this.smtpRelay = smtpRelayOf(this, props, { ...shared, sendQueue: this.send.queue }, requestLogKeeping);
    const baseUrl = this.frontDoor
      ? `https://${this.frontDoor.distribution.distributionDomainName}`
      : this.api.api.apiEndpoint;
    // Where unsubscribe links point: the front door when on, else the API (set last: both come after the functions).
    for (const fn of this.serviceFunctions)
      if (fn.spec.env.includes('PUBLIC_ORIGIN')) fn.setEnvironment('PUBLIC_ORIGIN', baseUrl);
    new CfnOutput(this, 'ApiUrl', {
      value: `${baseUrl}/v1`,
      description: this.frontDoor ? 'Base URL of the API (its front door)' : 'Base URL of the API',
    });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'ContentBucketName', { value: contentBucket.bucketName });
    new CfnOutput(this, 'SendDeadLetterQueueUrl', { value: this.send.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: this.webhooks.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'ConfigurationSetName', { value: configurationSet.configurationSetName });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
  }
}
