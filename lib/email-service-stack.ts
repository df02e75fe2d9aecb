import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, type HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  ConfigurationSet,
  EmailSendingEvent,
  EventDestination,
  SuppressionReasons,
} from 'aws-cdk-lib/aws-ses';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  INDEX_PROJECTION,
  INDEXES,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
} from '../functions/adapters/dynamodb/table.js';
import { FALLBACK_HANDLER, ROUTES } from '../functions/routes.js';
import { type SendTimings, sendTimings, timingProblems } from '../functions/send-timings.js';
import { BUNDLE_OPTIONS } from './bundling.js';

export interface EmailServiceStackProps extends StackProps {
  /**
   * Most concurrent consumer invocations sending through SES: the lever that keeps sending under
   * the account's SES send rate (each invocation sends up to `sendBatchSize` emails at once).
   * @default 5
   */
  readonly sendConcurrency?: number;
  /** @default 10 */
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
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
}

const HANDLERS_DIR = fileURLToPath(new URL('../functions/handlers/', import.meta.url));

/**
 * What every HTTP function does on the table: look up the caller's key (GetItem), count the request
 * against the key's rate limit and refresh its last use (UpdateItem).
 */
const HTTP_TABLE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'];

/**
 * DynamoDB actions each function needs on the table (besides HTTP_TABLE_ACTIONS for the HTTP
 * functions), and whether it reads the listing indexes; nothing else is granted.
 */
const TABLE_ACCESS: Record<string, { actions: string[]; indexes?: readonly string[] }> = {
  // The email's items, and its idempotency key (claimed with PutItem, given back with DeleteItem).
  'send-email': { actions: ['dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'] },
  'list-emails': {
    actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
    indexes: [INDEXES.emailsByTime.name, INDEXES.emailsByStatus.name],
  },
  'get-email': { actions: ['dynamodb:Query'] },
  'route-not-found': { actions: [] },
  'process-send-queue': { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  'process-ses-events': { actions: ['dynamodb:UpdateItem', 'dynamodb:PutItem'] },
  'create-domain': { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'] },
  'list-domains': { actions: ['dynamodb:Query'] },
  'get-domain': { actions: ['dynamodb:PutItem'] },
  'verify-domain': { actions: ['dynamodb:PutItem'] },
  'delete-domain': { actions: ['dynamodb:DeleteItem'] },
  'check-domains': { actions: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
  // Its progress item (GetItem, PutItem), the queued emails' index entries, status items (BatchGetItem)
  // and contents, and the conditional transitions (UpdateItem).
  'sweep-emails': {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:BatchGetItem',
      'dynamodb:UpdateItem',
    ],
    indexes: [INDEXES.emailsByStatus.name],
  },
  'create-api-key': { actions: ['dynamodb:PutItem'] },
  'list-api-keys': { actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'] },
  'delete-api-key': { actions: ['dynamodb:DeleteItem'] },
};

/** SES identity actions of the domain functions (on this account's identities in this region only). */
const SES_IDENTITY_ACCESS: Record<string, string[]> = {
  'create-domain': [
    'ses:CreateEmailIdentity',
    'ses:TagResource',
    'ses:GetEmailIdentity',
    'ses:PutEmailIdentityMailFromAttributes',
  ],
  'get-domain': ['ses:GetEmailIdentity'],
  'verify-domain': ['ses:GetEmailIdentity'],
  'delete-domain': ['ses:DeleteEmailIdentity'],
  'check-domains': ['ses:GetEmailIdentity'],
};

/**
 * The whole service: HTTP API → one Lambda per route → DynamoDB (single table) and SQS → consumer
 * → SES v2 (configuration set) → SNS → SQS → events consumer → status in DynamoDB.
 */
export class EmailServiceStack extends Stack {
  public readonly api: HttpApi;
  public readonly table: Table;
  public readonly sendQueue: Queue;
  public readonly sendDeadLetterQueue: Queue;
  public readonly eventsQueue: Queue;
  public readonly eventsDeadLetterQueue: Queue;
  public readonly configurationSet: ConfigurationSet;
  public readonly functions: Record<string, NodejsFunction> = {};
  /** The send pipeline's timings (queues, timeouts, the sweeper's bounds) and their invariants. */
  public readonly timings: SendTimings;

  constructor(scope: Construct, id: string, props: EmailServiceStackProps = {}) {
    super(scope, id, props);
    const consumerTimeout = Duration.seconds(30);
    const timings = sendTimings({
      consumerTimeoutSeconds: consumerTimeout.toSeconds(),
      sesConnectTimeoutMs: 2_000,
      sesRequestTimeoutMs: 10_000,
      // AWS's advice for a Lambda source: a visibility timeout of six times the function timeout,
      // so a message does not reappear while the invocation that received it still runs.
      sendVisibilitySeconds: consumerTimeout.toSeconds() * 6,
      sendMaxAttempts: props.sendMaxAttempts ?? 5,
      eventsVisibilitySeconds: consumerTimeout.toSeconds() * 6,
      eventsMaxAttempts: 5,
      // SES's documented maximum (MaxDeliverySeconds 300–50,400), set so the bound is this stack's own.
      maxDeliverySeconds: Duration.hours(14).toSeconds(),
    });
    const problems = timingProblems(timings);
    if (timings.sendVisibilitySeconds < 6 * timings.consumerTimeoutSeconds)
      problems.push('the send queue visibility timeout must be at least 6 × the consumer timeout');
    if (problems.length)
      throw new Error(`The send pipeline's timings break its invariants: ${problems.join('; ')}`);
    this.timings = timings;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
      // Rate counters and idempotency keys expire by themselves.
      timeToLiveAttribute: TTL_ATTRIBUTE,
    });
    for (const index of Object.values(INDEXES)) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.INCLUDE,
        nonKeyAttributes: [...INDEX_PROJECTION],
      });
    }

    this.sendDeadLetterQueue = this.queue('SendDeadLetterQueue', { retentionPeriod: Duration.days(14) });
    this.sendQueue = this.queue('SendQueue', {
      visibilityTimeout: Duration.seconds(timings.sendVisibilitySeconds),
      maxMessageSizeBytes: 1024 * 1024,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.sendDeadLetterQueue, maxReceiveCount: timings.sendMaxAttempts },
    });
    this.eventsDeadLetterQueue = this.queue('SesEventsDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
    });
    this.eventsQueue = this.queue('SesEventsQueue', {
      visibilityTimeout: Duration.seconds(timings.eventsVisibilitySeconds),
      deadLetterQueue: { queue: this.eventsDeadLetterQueue, maxReceiveCount: timings.eventsMaxAttempts },
    });

    // SES publishes delivery events of every email sent with this configuration set to the topic.
    const eventsTopic = new Topic(this, 'SesEventsTopic', { enforceSSL: true });
    eventsTopic.addSubscription(new SqsSubscription(this.eventsQueue, { rawMessageDelivery: true }));
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
      reputationMetrics: true,
      // Every recipient gets a final event (delivery or bounce) within this; the sweeper relies on it.
      maxDeliveryDuration: Duration.seconds(timings.maxDeliverySeconds),
    });
    this.configurationSet.addEventDestination('ToSns', {
      destination: EventDestination.snsTopic(eventsTopic),
      // SEND is SES's own word that it took an email: it settles an attempt whose worker timed out
      // or died after SES accepted, so such an email is marked sent instead of being sent again.
      events: [
        EmailSendingEvent.SEND,
        EmailSendingEvent.REJECT,
        EmailSendingEvent.BOUNCE,
        EmailSendingEvent.COMPLAINT,
        EmailSendingEvent.DELIVERY,
        EmailSendingEvent.DELIVERY_DELAY,
        EmailSendingEvent.RENDERING_FAILURE,
      ],
    });

    // HTTP API: HTTPS only (API Gateway has no plain-HTTP listener); one route and function per endpoint.
    // `$default` catches every request no route matches (including `/`), so even those get our error shape.
    const rateLimit = String(props.keyRateLimit ?? 10);
    const http = { logRetention, http: true, environment: { RATE_LIMIT_PER_SECOND: rateLimit } };
    const fallback = this.handler(FALLBACK_HANDLER, { ...http, memorySize: 256 });
    this.api = new HttpApi(this, 'Api', {
      createDefaultStage: false,
      description: 'Email sending API',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    });
    acknowledgeApiKeyAuth(this.api);
    // Access log: one JSON line per request, with no header (so no key) in it.
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.apiRateLimit ?? 50, burstLimit: props.apiBurstLimit ?? 100 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTimeEpoch',
            ip: '$context.identity.sourceIp',
            route: '$context.routeKey',
            status: '$context.status',
            bytes: '$context.responseLength',
            latency: '$context.responseLatency',
            error: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    for (const route of ROUTES) {
      const fn = this.handler(route.handler, http);
      this.api.addRoutes({
        path: route.path,
        methods: [route.method as HttpMethod],
        integration: new HttpLambdaIntegration(`${pascal(route.handler)}Integration`, fn),
      });
    }

    this.functions['send-email']?.addEnvironment('SEND_QUEUE_URL', this.sendQueue.queueUrl);
    if (this.functions['send-email']) this.sendQueue.grantSendMessages(this.functions['send-email']);

    const consumer = this.handler('process-send-queue', {
      logRetention,
      timeout: consumerTimeout,
      environment: {
        CONFIGURATION_SET_NAME: this.configurationSet.configurationSetName,
        SEND_MAX_RECEIVE_COUNT: String(timings.sendMaxAttempts),
        SES_CONNECT_TIMEOUT_MS: String(timings.sesConnectTimeoutMs),
        SES_REQUEST_TIMEOUT_MS: String(timings.sesRequestTimeoutMs),
      },
    });
    consumer.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [
          this.sesIdentities(),
          this.formatArn({
            service: 'ses',
            resource: 'configuration-set',
            resourceName: this.configurationSet.configurationSetName,
          }),
        ],
      }),
    );
    this.acknowledgeSesIdentities(
      consumer,
      "ses:SendEmail is authorised against the identity of each email's sender, chosen at run time: it is limited to " +
        "this account's identities in this region and to this stack's configuration set.",
    );
    consumer.addEventSource(
      new SqsEventSource(this.sendQueue, {
        batchSize: props.sendBatchSize ?? 10,
        reportBatchItemFailures: true,
        maxConcurrency: props.sendConcurrency ?? 5,
      }),
    );

    const eventsConsumer = this.handler('process-ses-events', { logRetention, timeout: consumerTimeout });
    eventsConsumer.addEventSource(
      new SqsEventSource(this.eventsQueue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(1),
        reportBatchItemFailures: true,
      }),
    );

    // The sweeper: every minute, nothing accepted is left queued for good (see sweep.ts).
    const sweeper = this.handler('sweep-emails', {
      logRetention,
      timeout: Duration.seconds(60),
      environment: {
        SEND_QUEUE_URL: this.sendQueue.queueUrl,
        SEND_DEAD_LETTER_QUEUE_URL: this.sendDeadLetterQueue.queueUrl,
        SEND_MAX_RECEIVE_COUNT: String(timings.sendMaxAttempts),
        SWEEP_REQUEUE_AFTER_MS: String(timings.requeueAfterMs),
        SWEEP_BACKLOG_GRACE_MS: String(timings.backlogGraceMs),
        SWEEP_UNKNOWN_OUTCOME_AFTER_MS: String(timings.unknownOutcomeAfterMs),
        SWEEP_FINAL_EVENTS_AFTER_MS: String(timings.finalEventsAfterMs),
      },
    });
    sweeper.addToRolePolicy(
      new PolicyStatement({
        actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes'],
        resources: [this.sendQueue.queueArn],
      }),
    );
    // It reads the dead-letter queue without deleting (operators inspect it; its depth alarms).
    sweeper.addToRolePolicy(
      new PolicyStatement({
        actions: ['sqs:ReceiveMessage'],
        resources: [this.sendDeadLetterQueue.queueArn],
      }),
    );
    new Rule(this, 'SweepEmailsSchedule', {
      description: 'Re-queues stranded emails and settles those whose outcome will never come',
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweeper, { retryAttempts: 0 })],
    });

    // Domains: SES identity actions for the domain functions, and the scheduled re-check.
    const checker = this.handler('check-domains', { logRetention, timeout: Duration.seconds(60) });
    new Rule(this, 'CheckDomainsSchedule', {
      description: 'Re-checks the DNS verification of pending sending domains',
      schedule: Schedule.rate(Duration.minutes(props.domainCheckMinutes ?? 1)),
      targets: [new LambdaFunction(checker, { retryAttempts: 0 })],
    });
    for (const [name, actions] of Object.entries(SES_IDENTITY_ACCESS)) {
      const fn = this.functions[name];
      if (!fn) continue;
      fn.addToRolePolicy(new PolicyStatement({ actions, resources: [this.sesIdentities()] }));
      this.acknowledgeSesIdentities(
        fn,
        "Sending domains are added at run time, so their SES identities cannot be named in advance: limited to this account's identities in this region.",
      );
    }

    new CfnOutput(this, 'ApiUrl', {
      value: `${this.api.apiEndpoint}/v1`,
      description: 'Base URL of the API',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SendDeadLetterQueueUrl', { value: this.sendDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'ConfigurationSetName', { value: this.configurationSet.configurationSetName });
  }

  private sesIdentities(): string {
    return this.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' });
  }

  /** cdk-nag names the finding by the rendered ARN (pseudo parameters where region/account are tokens). */
  private acknowledgeSesIdentities(fn: NodejsFunction, reason: string) {
    const shown = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
    const identities = `arn:<AWS::Partition>:ses:${shown(this.region, 'Region')}:${shown(this.account, 'AccountId')}:identity/*`;
    if (fn.role)
      Validations.of(fn.role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${identities}]`, reason });
  }

  private queue(id: string, props: ConstructorParameters<typeof Queue>[2]): Queue {
    return new Queue(this, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, ...props });
  }

  /** One bundled function for a module of functions/handlers/, with exactly its table access. */
  private handler(
    name: string,
    options: {
      logRetention: RetentionDays;
      timeout?: Duration;
      memorySize?: number;
      environment?: Record<string, string>;
      /** An API function: it also authenticates and rate-limits (HTTP_TABLE_ACTIONS). */
      http?: boolean;
    },
  ): NodejsFunction {
    const id = pascal(name);
    const logGroup = new LogGroup(this, `${id}Logs`, {
      retention: options.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Its own role, allowed to write to its own log group only (not the managed basic-execution policy).
    const role = new Role(this, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    const fn = new NodejsFunction(this, id, {
      entry: `${HANDLERS_DIR}${name}.ts`,
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: options.memorySize ?? 512,
      timeout: options.timeout ?? Duration.seconds(10),
      environment: { NODE_OPTIONS: '--enable-source-maps', ...options.environment },
      role,
      logGroup,
      bundling: { ...BUNDLE_OPTIONS, mainFields: [...BUNDLE_OPTIONS.mainFields], format: OutputFormat.ESM },
    });
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime this project targets and tests against; moving to 24 is a deliberate change.',
    });
    const access = TABLE_ACCESS[name];
    if (access) {
      const actions = [...new Set([...(options.http ? HTTP_TABLE_ACTIONS : []), ...access.actions])];
      // Exactly these actions on the table, and on the two listing indexes only where it queries them.
      const indexArns = (access.indexes ?? []).map((name) => `${this.table.tableArn}/index/${name}`);
      fn.addToRolePolicy(new PolicyStatement({ actions, resources: [this.table.tableArn, ...indexArns] }));
      fn.addEnvironment('TABLE_NAME', this.table.tableName);
    }
    this.functions[name] = fn;
    return fn;
  }
}

/** API keys are checked by every function itself (see functions/http/middleware.ts), not by an API Gateway authorizer. */
function acknowledgeApiKeyAuth(scope: Construct) {
  Validations.of(scope).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason:
      'Every function authenticates the bearer API key itself (SHA-256 lookup in the table) and answers 401 in the ' +
      "API's own error shape; an authorizer would add an invocation and latency to every request.",
  });
}

const pascal = (name: string) => name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase());
