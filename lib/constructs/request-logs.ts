import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { FilterPattern, SubscriptionFilter } from 'aws-cdk-lib/aws-logs';
import { LambdaDestination } from 'aws-cdk-lib/aws-logs-destinations';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LOG_LINE_MARKER, LOG_LINE_TYPE } from '../../functions/request-logs/model.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface RequestLogsProps {
  /** What the writer is bound to (the table, and LOG_RETENTION_DAYS among the settings). */
  readonly resources: ServiceResources;
  /** The functions whose request-log lines are stored: the API's. */
  readonly sources: readonly ServiceFunction[];
  /** Where the writer is deployed (in its concept's stack). */
  readonly functions: ConceptStacks;
  /** Where the retries' dead-letter alarm goes (none: no alarm). */
  readonly monitoring?: Monitoring;
  /**
   * Days the logs are kept (the writer's LOG_RETENTION_DAYS): the retry and dead-letter queues keep
   * a batch no longer (SQS keeps a message at most 14 days), as the writer stores none past it.
   * @default 14
   */
  readonly retentionDays?: number;
}

/** Times a batch is taken from the retry queue before it is kept in the dead-letter queue. */
export const WRITER_RETRY_RECEIVES = 10;

/** The subscription filter's pattern: the marked JSON lines only (Powertools' lines have no such field). */
export const REQUEST_LOG_FILTER = `{ $.${LOG_LINE_MARKER} = "${LOG_LINE_TYPE}" }`;

/**
 * The API's request logs (docs/logs.md): each API function writes one JSON line per request to its
 * log group (nothing awaited in the request); a subscription filter on each group sends the marked
 * lines to the writer function, which stores them in the table. CloudWatch Logs invokes the writer
 * asynchronously with batches of lines, and retries a failed invocation (Lambda's asynchronous
 * retries, twice); the items are keyed by log id, so a batch written again changes nothing.
 * A batch the writer still fails after those (DynamoDB throttling past its retries) goes to its
 * failure destination, the retry queue, whose messages the writer takes again (the invocation
 * record, with the batch in it) until they are stored; one taken WRITER_RETRY_RECEIVES times is kept
 * in a dead-letter queue, with an alarm, for a redrive. No batch is dropped while its logs are
 * kept: both queues keep a message 14 days, or the logs' retention when that is shorter.
 * Defaults: the writer has 256 MB and 30 s; one invoke permission for the account's log groups
 * in this region (one per group would grow the function's policy past its 20 KB limit). Each filter
 * is made beside its function (in that function's concept stack), after the writer's permission.
 */
export class RequestLogs extends Construct {
  public readonly writer: ServiceFunction;
  public readonly filters: SubscriptionFilter[] = [];
  /** The writer's failure destination, which it consumes too, and where what keeps failing is kept. */
  public readonly retryQueue: Queue;
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: RequestLogsProps) {
    super(scope, id);
    this.writer = props.functions
      .add('write-request-logs', { memorySize: 256, timeout: Duration.seconds(30) })
      .bind(props.resources);
    const kept = Duration.days(Math.min(14, props.retentionDays ?? 14));
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue', { retentionPeriod: kept });
    this.retryQueue = secureQueue(this, 'RetryQueue', {
      // Six times the writer's timeout, as Lambda advises for a queue a function consumes.
      visibilityTimeout: Duration.seconds(180),
      retentionPeriod: kept,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: WRITER_RETRY_RECEIVES },
    });
    this.writer.function.configureAsyncInvoke({
      retryAttempts: 2,
      onFailure: new SqsDestination(this.retryQueue),
    });
    this.writer.function.addEventSource(
      new SqsEventSource(this.retryQueue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: 2,
      }),
    );
    props.monitoring?.alarm('RequestLogDeadLetters', depth(this.deadLetterQueue), {
      threshold: 1,
      alarmDescription: `Request logs could not be stored 10 times from their retry queue and wait in its dead-letter queue (kept ${kept.toDays()} days): redrive them once DynamoDB takes them.`,
    });
    const stack = Stack.of(this);
    this.writer.function.addPermission('FromApiLogGroups', {
      principal: new ServicePrincipal('logs.amazonaws.com'),
      sourceAccount: stack.account,
      sourceArn: stack.formatArn({
        service: 'logs',
        resource: 'log-group',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    });
    const permission = this.writer.function.node.findChild('FromApiLogGroups');
    const destination = new LambdaDestination(this.writer.function, { addPermissions: false });
    for (const source of props.sources) {
      const filter = new SubscriptionFilter(source, 'RequestLogs', {
        logGroup: source.logGroup,
        destination,
        filterPattern: FilterPattern.literal(REQUEST_LOG_FILTER),
        // Named by CloudFormation, not by us: a filter that moves (with its function, to another
        // stack) is made before the one it replaces is deleted, and a log group takes two, but
        // not two of one name (the old one's deletion would take the new one with it).
      });
      filter.node.addDependency(permission);
      this.filters.push(filter);
    }
  }
}
