import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, type HttpMethod, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, type IFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
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
import { INDEX_PROJECTION, INDEXES, TABLE_KEYS } from '../functions/adapters/dynamodb/table.js';
import { FALLBACK_HANDLER, ROUTES } from '../functions/routes.js';
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
  /** API Gateway stage throttling (all keys together). @default 50 requests/s, burst 100 */
  readonly apiRateLimit?: number;
  readonly apiBurstLimit?: number;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
}

const HANDLERS_DIR = fileURLToPath(new URL('../functions/handlers/', import.meta.url));

/** DynamoDB actions each function needs on the table (and its indexes); nothing else is granted. */
const TABLE_ACCESS: Record<string, string[]> = {
  'send-email': ['dynamodb:GetItem', 'dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  'list-emails': ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'],
  'get-email': ['dynamodb:GetItem', 'dynamodb:Query'],
  'process-send-queue': ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
  'process-ses-events': ['dynamodb:UpdateItem', 'dynamodb:PutItem'],
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
  public readonly configurationSet: ConfigurationSet;
  public readonly functions: Record<string, NodejsFunction> = {};

  constructor(scope: Construct, id: string, props: EmailServiceStackProps = {}) {
    super(scope, id, props);
    const sendMaxAttempts = props.sendMaxAttempts ?? 5;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
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

    const consumerTimeout = Duration.seconds(30);
    this.sendDeadLetterQueue = this.queue('SendDeadLetterQueue', { retentionPeriod: Duration.days(14) });
    this.sendQueue = this.queue('SendQueue', {
      // AWS's advice for a Lambda source: at least six times the function timeout.
      visibilityTimeout: Duration.seconds(consumerTimeout.toSeconds() * 6),
      maxMessageSizeBytes: 1024 * 1024,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.sendDeadLetterQueue, maxReceiveCount: sendMaxAttempts },
    });
    const eventsDeadLetterQueue = this.queue('SesEventsDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
    });
    this.eventsQueue = this.queue('SesEventsQueue', {
      visibilityTimeout: Duration.seconds(consumerTimeout.toSeconds() * 6),
      deadLetterQueue: { queue: eventsDeadLetterQueue, maxReceiveCount: 5 },
    });

    // SES publishes delivery events of every email sent with this configuration set to the topic.
    const eventsTopic = new Topic(this, 'SesEventsTopic', { enforceSSL: true });
    eventsTopic.addSubscription(new SqsSubscription(this.eventsQueue, { rawMessageDelivery: true }));
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
      reputationMetrics: true,
    });
    this.configurationSet.addEventDestination('ToSns', {
      destination: EventDestination.snsTopic(eventsTopic),
      // No SEND: the consumer records sent_at itself; that event would cost a publish, a queue
      // message, an invocation and a write per email and tell nothing new.
      events: [
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
    const fallback = this.handler(FALLBACK_HANDLER, { logRetention, memorySize: 128 });
    this.api = new HttpApi(this, 'Api', {
      createDefaultStage: false,
      description: 'Email sending API',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    });
    new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.apiRateLimit ?? 50, burstLimit: props.apiBurstLimit ?? 100 },
    });
    for (const route of ROUTES) {
      const fn = this.handler(route.handler, { logRetention });
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
        SEND_MAX_RECEIVE_COUNT: String(sendMaxAttempts),
        SEND_LEASE_MS: String(consumerTimeout.toMilliseconds() * 2),
      },
    });
    consumer.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [
          this.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' }),
          this.formatArn({
            service: 'ses',
            resource: 'configuration-set',
            resourceName: this.configurationSet.configurationSetName,
          }),
        ],
      }),
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

    new CfnOutput(this, 'ApiUrl', {
      value: `${this.api.apiEndpoint}/v1`,
      description: 'Base URL of the API',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SendDeadLetterQueueUrl', { value: this.sendDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'ConfigurationSetName', { value: this.configurationSet.configurationSetName });
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
    },
  ): NodejsFunction {
    const id = pascal(name);
    const fn = new NodejsFunction(this, id, {
      entry: `${HANDLERS_DIR}${name}.ts`,
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: options.memorySize ?? 512,
      timeout: options.timeout ?? Duration.seconds(10),
      environment: { NODE_OPTIONS: '--enable-source-maps', ...options.environment },
      logGroup: new LogGroup(this, `${id}Logs`, {
        retention: options.logRetention,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      bundling: { ...BUNDLE_OPTIONS, mainFields: [...BUNDLE_OPTIONS.mainFields], format: OutputFormat.ESM },
    });
    this.grantTable(fn, TABLE_ACCESS[name] ?? []);
    this.functions[name] = fn;
    return fn;
  }

  /** Grants exactly these actions on the table and its indexes, and tells the function the table's name. */
  private grantTable(
    fn: IFunction & { addEnvironment(key: string, value: string): unknown },
    actions: string[],
  ) {
    if (actions.length === 0) return;
    this.table.grant(fn, ...actions);
    fn.addEnvironment('TABLE_NAME', this.table.tableName);
  }
}

const pascal = (name: string) => name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase());
