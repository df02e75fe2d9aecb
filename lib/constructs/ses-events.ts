import { Duration, Stack } from 'aws-cdk-lib';
import { GraphWidget, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import {
  ConfigurationSet,
  type ConfigurationSetEventDestination,
  EmailSendingEvent,
  EventDestination,
  SuppressionReasons,
} from 'aws-cdk-lib/aws-ses';
import type { Subscription } from 'aws-cdk-lib/aws-sns';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SendTimings } from '../../functions/emails/send-timings.js';
import { keepLogicalId, LEGACY_IDS, legacyEventsSubscriptionId } from '../legacy-ids.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface SesEventsPipelineProps {
  readonly resources: Omit<ServiceResources, 'configurationSet'>;
  /** The pipeline's timings: the events queue's visibility and attempts, SES's maximum delivery time. */
  readonly timings: SendTimings;
  readonly monitoring: Monitoring;
  /** Where its consumer is deployed (in its concept's stack). */
  readonly functions: ConceptStacks;
  /**
   * Most concurrent consumer invocations (2 to 1,000, the SQS event source's bounds), each applying
   * a batch of up to `timings.eventsBatchSize` events: how fast a backlog of events is applied, and
   * the most Lambda concurrency and table writes SES's events can take at once.
   * @default 5
   */
  readonly concurrency?: number;
  /** SES's review thresholds for the account's bounce and complaint rates (0.05 and 0.001). */
  readonly bounceRateAlarm?: number;
  readonly complaintRateAlarm?: number;
}

/**
 * SES's side of the pipeline: the configuration set every email is sent with (SES's suppression
 * list for bounces and complaints, reputation metrics, a maximum delivery time the sweeper relies
 * on), its events published to an SNS topic (raw delivery) and on to a queue with a dead-letter
 * queue, and the consumer that applies them to the emails. Its alarms: the dead-letter queue is
 * not empty; the account's bounce or complaint rate reached SES's review threshold.
 */
export class SesEventsPipeline extends Construct {
  public readonly configurationSet: ConfigurationSet;
  /** Where the configuration set publishes its events (the stack orders it after the sending code). */
  public readonly eventDestination: ConfigurationSetEventDestination;
  public readonly topic: Topic;
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;
  /** The events queue's subscription to the topic. */
  public readonly subscription: Subscription;
  public readonly consumer: ServiceFunction;

  /**
   * Lets SES publish to the topic for the configuration sets matching this name pattern too
   * (domains' own sets, made at run time with the same destination), as CDK lets it for the
   * stack's set: from this account only.
   */
  acceptFromConfigurationSets(pattern: string): void {
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        principals: [new ServicePrincipal('ses.amazonaws.com')],
        conditions: {
          StringEquals: { 'AWS:SourceAccount': Stack.of(this).account },
          ArnLike: {
            'AWS:SourceArn': Stack.of(this).formatArn({
              service: 'ses',
              resource: 'configuration-set',
              resourceName: pattern,
            }),
          },
        },
      }),
    );
  }

  constructor(scope: Construct, id: string, props: SesEventsPipelineProps) {
    super(scope, id);
    const { timings, monitoring } = props;
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue', { retentionPeriod: Duration.days(14) });
    keepLogicalId(this.deadLetterQueue, LEGACY_IDS.eventsDeadLetterQueue);
    keepLogicalId(this.deadLetterQueue.node.findChild('Policy'), LEGACY_IDS.eventsDeadLetterQueuePolicy);
    this.queue = secureQueue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(timings.eventsVisibilitySeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: timings.eventsMaxAttempts },
    });
    keepLogicalId(this.queue, LEGACY_IDS.eventsQueue);
    keepLogicalId(this.queue.node.findChild('Policy'), LEGACY_IDS.eventsQueuePolicy);

    this.topic = new Topic(this, 'Topic', { enforceSSL: true });
    keepLogicalId(this.topic, LEGACY_IDS.eventsTopic);
    keepLogicalId(this.topic.node.findChild('Policy'), LEGACY_IDS.eventsTopicPolicy);
    this.subscription = this.topic.addSubscription(
      new SqsSubscription(this.queue, { rawMessageDelivery: true }),
    );
    keepLogicalId(this.subscription, legacyEventsSubscriptionId(Stack.of(this).stackName));
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
      reputationMetrics: true,
      // Every recipient gets a final event (delivery or bounce) within this; the sweeper relies on it.
      maxDeliveryDuration: Duration.seconds(timings.maxDeliverySeconds),
    });
    keepLogicalId(this.configurationSet, LEGACY_IDS.configurationSet);
    const destination = this.configurationSet.addEventDestination('ToSns', {
      destination: EventDestination.snsTopic(this.topic),
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
        // Opens and clicks: SES reports them only for emails sent with tracking on (a configuration
        // set's or a send's own); an email without it never has any.
        EmailSendingEvent.OPEN,
        EmailSendingEvent.CLICK,
      ],
    });
    keepLogicalId(destination, LEGACY_IDS.configurationSetEventDestination);
    this.eventDestination = destination;

    this.consumer = props.functions
      .add('process-ses-events', { timeout: Duration.seconds(timings.eventsConsumerTimeoutSeconds) })
      .bind(props.resources);
    this.consumer.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: timings.eventsBatchSize,
        maxBatchingWindow: Duration.millis(timings.eventsBatchWindowMs),
        reportBatchItemFailures: true,
        maxConcurrency: props.concurrency ?? 5,
      }),
    );

    monitoring.alarm('SesEventsDeadLetters', depth(this.deadLetterQueue), {
      threshold: 1,
      alarmDescription:
        'SES events could not be applied 5 times and wait in the events dead-letter queue: their emails keep an old status.',
    });
    // SES's review thresholds, on the account's rates (what SES watches): act before it does.
    const reputation = (metricName: string) =>
      new Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: Duration.hours(1) });
    monitoring.alarm('SesBounceRate', reputation('Reputation.BounceRate'), {
      threshold: props.bounceRateAlarm ?? 0.05,
      alarmDescription:
        "The account's bounce rate reached 5 %: SES puts an account under review there, and may pause its sending at 10 %.",
    });
    monitoring.alarm('SesComplaintRate', reputation('Reputation.ComplaintRate'), {
      threshold: props.complaintRateAlarm ?? 0.001,
      alarmDescription:
        "The account's complaint rate reached 0.1 %: SES puts an account under review there, and may pause its sending at 0.5 %.",
    });
    monitoring.addRow(
      'events',
      new GraphWidget({
        title: 'SES events applied; suppressions',
        left: (
          [
            'EventsSent',
            'EventsDelivered',
            'EventsBounced',
            'EventsComplained',
            'EventsDelayed',
            'EventsFailed',
            'EventsOpened',
            'EventsClicked',
            'EventsAutomated',
          ] as const
        ).map((name) => monitoring.counter(name)),
        // What keeps the reputation below: addresses put on the suppression list, recipients left out.
        right: (['SuppressionsAdded', 'RecipientsSuppressed'] as const).map((name) =>
          monitoring.counter(name),
        ),
        width: 12,
      }),
      new GraphWidget({
        title: 'SES reputation (account)',
        left: [reputation('Reputation.BounceRate'), reputation('Reputation.ComplaintRate')],
        width: 12,
      }),
    );
    monitoring.addRow(
      'queues',
      new GraphWidget({
        title: 'SES events queue',
        left: [this.queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' })],
        right: [this.queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' })],
        width: 12,
      }),
      new GraphWidget({
        title: 'SES events dead-letter queue',
        left: [depth(this.deadLetterQueue)],
        width: 12,
      }),
    );
  }
}
