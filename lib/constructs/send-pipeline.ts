import { Duration } from 'aws-cdk-lib';
import { GraphWidget } from 'aws-cdk-lib/aws-cloudwatch';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SendTimings } from '../../functions/emails/send-timings.js';
import { keepLogicalId, LEGACY_IDS } from '../legacy-ids.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface SendPipelineProps {
  /** The table, the configuration set and the settings its functions read. */
  readonly resources: Omit<
    ServiceResources,
    'sendQueue' | 'sendDeadLetterQueue' | 'broadcastSendQueue' | 'broadcastLaneDeadLetterQueue'
  >;
  /** The pipeline's timings (functions/emails/send-timings.ts). */
  readonly timings: SendTimings;
  readonly monitoring: Monitoring;
  /**
   * Most concurrent consumer invocations (2 to 1,000), each taking up to `batchSize` emails: how
   * fast a backlog is taken up. Whatever it is, every invocation books its sends on one schedule
   * in the table at the account's SES rate, so together they stay within it.
   * @default 5
   */
  readonly concurrency?: number;
  /**
   * Emails a consumer invocation takes at once (1 to 100). Each batch books its sends with one write
   * to the one send schedule item, which takes about 1,000 writes a second, so the schedule carries
   * 1,000 × batchSize emails a second. Above 10, SQS's event source needs a batching window: the
   * stack sets 1 s, which under load fills at once and when idle delays a send by up to a second.
   * @default 10
   */
  readonly batchSize?: number;
  /** Where its functions are deployed (each in its concept's stack). */
  readonly functions: ConceptStacks;
}

/**
 * The send pipeline: the send queue (and its dead-letter queue after `sendMaxAttempts` receives),
 * the consumer that hands each email to SES at most once, the sweeper that, every minute, leaves
 * nothing accepted `queued` for good (see functions/emails/sweep.ts), and the scheduler that queues
 * scheduled emails as they fall due (functions/emails/scheduler.ts). Its alarms:
 * the dead-letter queue is not empty; the queue's oldest message is older than the sweeper's
 * re-queue window (emails are waiting longer than a retry should take); SES takes no email (the
 * account's 24-hour quota is spent, or sending is paused): emails wait, queued, until it does.
 */
export class SendPipeline extends Construct {
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;
  /**
   * The broadcast lane (issue 41): broadcast emails' send jobs, with the send queue's timings and a
   * dead-letter queue of its own, consumed by `process-broadcast-queue` once the catalog declares it.
   */
  public readonly laneQueue: Queue;
  public readonly laneDeadLetterQueue: Queue;
  public readonly consumer: ServiceFunction;
  /**
   * The broadcast lane's consumer (process-broadcast-queue): the send consumer's code, timeout,
   * batch size and concurrency, on the lane; it books the shared schedule behind transactional mail.
   */
  public readonly laneConsumer: ServiceFunction;
  public readonly sweeper: ServiceFunction;
  /** Queues scheduled emails as they fall due (a function of its own, so the sweeper never holds it up). */
  public readonly scheduler: ServiceFunction;

  constructor(scope: Construct, id: string, props: SendPipelineProps) {
    super(scope, id);
    const { timings, monitoring } = props;
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue', { retentionPeriod: Duration.days(14) });
    keepLogicalId(this.deadLetterQueue, LEGACY_IDS.sendDeadLetterQueue);
    keepLogicalId(this.deadLetterQueue.node.findChild('Policy'), LEGACY_IDS.sendDeadLetterQueuePolicy);
    this.queue = secureQueue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(timings.sendVisibilitySeconds),
      maxMessageSizeBytes: 1024 * 1024,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: timings.sendMaxAttempts },
    });
    keepLogicalId(this.queue, LEGACY_IDS.sendQueue);
    keepLogicalId(this.queue.node.findChild('Policy'), LEGACY_IDS.sendQueuePolicy);
    this.laneDeadLetterQueue = secureQueue(this, 'LaneDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
    });
    this.laneQueue = secureQueue(this, 'LaneQueue', {
      visibilityTimeout: Duration.seconds(timings.sendVisibilitySeconds),
      maxMessageSizeBytes: 1024 * 1024,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.laneDeadLetterQueue, maxReceiveCount: timings.sendMaxAttempts },
    });
    const resources: ServiceResources = {
      ...props.resources,
      sendQueue: this.queue,
      sendDeadLetterQueue: this.deadLetterQueue,
      broadcastSendQueue: this.laneQueue,
      broadcastLaneDeadLetterQueue: this.laneDeadLetterQueue,
    };

    this.consumer = props.functions
      .add('process-send-queue', { timeout: Duration.seconds(timings.consumerTimeoutSeconds) })
      .bind(resources);
    this.consumer.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: props.batchSize ?? 10,
        ...((props.batchSize ?? 10) > 10 ? { maxBatchingWindow: Duration.seconds(1) } : {}),
        reportBatchItemFailures: true,
        maxConcurrency: props.concurrency ?? 5,
      }),
    );

    this.laneConsumer = props.functions
      .add('process-broadcast-queue', { timeout: Duration.seconds(timings.consumerTimeoutSeconds) })
      .bind(resources);
    this.laneConsumer.function.addEventSource(
      new SqsEventSource(this.laneQueue, {
        batchSize: props.batchSize ?? 10,
        ...((props.batchSize ?? 10) > 10 ? { maxBatchingWindow: Duration.seconds(1) } : {}),
        reportBatchItemFailures: true,
        maxConcurrency: props.concurrency ?? 5,
      }),
    );

    this.sweeper = props.functions.add('sweep-emails', { timeout: Duration.seconds(60) }).bind(resources);
    this.sweeper.runEvery(
      Duration.minutes(1),
      'Re-queues stranded emails and settles those whose outcome will never come',
    );
    this.scheduler = props.functions
      .add('dispatch-scheduled', { timeout: Duration.seconds(60) })
      .bind(resources);
    this.scheduler.runEvery(Duration.minutes(1), 'Queues scheduled emails as they fall due');

    monitoring.alarm('BroadcastLaneDeadLetters', depth(this.laneDeadLetterQueue), {
      threshold: 1,
      alarmDescription:
        "A broadcast email's send message failed every attempt and is in the broadcast lane's dead-letter queue (see process-broadcast-queue's logs and the email's failure_reason).",
    });
    monitoring.alarm('SendDeadLetters', depth(this.deadLetterQueue), {
      threshold: 1,
      alarmDescription:
        'A send message failed every attempt and is in the send dead-letter queue; its email is failed (see its failure_reason).',
    });
    monitoring.alarm(
      'SendQueueAge',
      this.queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: Duration.minutes(5) }),
      {
        threshold: timings.requeueAfterMs / 1000,
        evaluationPeriods: 2,
        alarmDescription:
          "The send queue's oldest message is older than a message's retries take: sending is stalled or far behind SES's rate.",
      },
    );
    monitoring.alarm('SesSendingBlocked', monitoring.counter('SesSendingBlocked'), {
      threshold: 1,
      alarmDescription:
        "SES takes no email: the account's 24-hour sending quota is spent or sending is paused. Emails wait, queued, and go once SES takes them again.",
    });
    monitoring.addRow(
      'emails',
      new GraphWidget({
        title: 'Emails',
        left: (
          [
            'EmailsAccepted',
            'EmailsSent',
            'SendRetried',
            'SesThrottled',
            'SendDeferred',
            'SesSendingBlocked',
            'SendOutcomeUnknown',
          ] as const
        ).map((name) => monitoring.counter(name)),
        width: 12,
      }),
      new GraphWidget({
        title: 'Emails failed, by reason; sweeper and scheduler actions',
        left: (
          [
            'EmailsFailedRejected',
            'EmailsFailedGaveUp',
            'EmailsFailedDeadLetter',
            'EmailsFailedUnknownOutcome',
            'EmailsFailedNoFinalEvent',
            'SweepRequeued',
            'SweepDeferred',
            'ScheduledDispatched',
            'MetricCountsLost',
            'BroadcastTallyLost',
          ] as const
        ).map((name) => monitoring.counter(name)),
        width: 12,
      }),
    );
    monitoring.addRow(
      'queues',
      new GraphWidget({
        title: 'Send queue',
        left: [
          this.queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
          this.queue.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum' }),
        ],
        right: [this.queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' })],
        width: 12,
      }),
      new GraphWidget({ title: 'Send dead-letter queue', left: [depth(this.deadLetterQueue)], width: 12 }),
    );
  }
}
