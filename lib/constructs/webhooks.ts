import { Duration } from 'aws-cdk-lib';
import { GraphWidget } from 'aws-cdk-lib/aws-cloudwatch';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ATTEMPT_TIMEOUT_MS, ENDPOINT_SHARE, MAX_ATTEMPTS } from '../../functions/webhooks/model.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface WebhooksProps {
  /** The table and the settings its function reads. */
  readonly resources: Omit<ServiceResources, 'webhookQueue'>;
  readonly monitoring: Monitoring;
  /**
   * Most concurrent delivery invocations (each makes up to `batchSize` attempts side by side, at
   * most ENDPOINT_SHARE (4) to one endpoint): the bound on how hard the service calls its users'
   * endpoints. At least 2 (Lambda's minimum).
   * @default 5
   */
  readonly concurrency?: number;
  /** @default 10 */
  readonly batchSize?: number;
  /** Where its functions are deployed (each in its concept's stack). */
  readonly functions: ConceptStacks;
}

/** Receives more than the schedule's attempts before a message counts as undeliverable (crashes, timeouts). */
const SPARE_RECEIVES = 2;

/**
 * Webhook delivery: the delivery queue (one message per event and endpoint, which the SES events
 * consumer, the send consumer and the domain functions write to), the function that POSTs each
 * message, and the dead-letter queue for what cannot even be attempted (an unreadable message, or
 * one whose attempts keep crashing). A failed attempt's retry due within 15 minutes is a new
 * message sent with that delay; a later one is parked in the table; an endpoint whose circuit
 * breaker is open has its messages held in the table. The requeue-webhook-retries function (every
 * minute) puts parked retries and held messages back on the queue, so no retry is in flight and
 * a dead endpoint cannot fill the queue's in-flight limit. Its alarms: the dead-letter queue is
 * not empty; events could not be published; an endpoint was disabled after failing for days.
 */
export class Webhooks extends Construct {
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;
  public readonly delivery: ServiceFunction;
  /** Puts parked retries back on the queue as they fall due, every minute. */
  public readonly retries: ServiceFunction;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const { monitoring } = props;
    const batchSize = props.batchSize ?? 10;
    // A batch of one endpoint's messages runs ENDPOINT_SHARE at a time: its rounds of attempts, and 10 s to spare.
    const timeout = Duration.seconds(
      Math.ceil(batchSize / ENDPOINT_SHARE) * Math.ceil(ATTEMPT_TIMEOUT_MS / 1000) + 10,
    );
    this.deadLetterQueue = secureQueue(this, 'DeadLetterQueue', { retentionPeriod: Duration.days(14) });
    // The schedule's attempts span about 28 hours from the first one; four days leaves room for a backlog.
    this.queue = secureQueue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(timeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_ATTEMPTS + SPARE_RECEIVES },
    });
    this.delivery = props.functions
      .add('deliver-webhooks', { timeout })
      .bind({ ...props.resources, webhookQueue: this.queue });
    this.delivery.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: Math.max(2, props.concurrency ?? 5),
      }),
    );
    this.retries = props.functions
      .add('requeue-webhook-retries', { timeout: Duration.seconds(60) })
      .bind({ ...props.resources, webhookQueue: this.queue });
    this.retries.runEvery(
      Duration.minutes(1),
      'Puts parked webhook retries back on the delivery queue as they fall due',
    );

    monitoring.alarm('WebhookDeadLetters', depth(this.deadLetterQueue), {
      threshold: 1,
      alarmDescription:
        'A webhook message could not be attempted (unreadable, or its attempts kept crashing) and is in the webhook dead-letter queue.',
    });
    monitoring.alarm('WebhookPublishFailed', monitoring.counter('WebhookPublishFailed'), {
      threshold: 1,
      alarmDescription:
        'Events were lost: they could not be built, or neither published nor kept to be published late (see the logs of the function that raised them). Events kept because the endpoints could not be read or the queue refused them are counted WebhookEventsKept, and published within a minute.',
    });
    monitoring.alarm('WebhooksDisabled', monitoring.counter('WebhooksDisabled'), {
      threshold: 1,
      alarmDescription:
        'A webhook endpoint was disabled after every attempt to it failed for 3 days; GET /v1/webhooks/{id} says why.',
    });
    monitoring.addRow(
      'events',
      new GraphWidget({
        title: 'Webhooks',
        left: (
          [
            'WebhookMessagesPublished',
            'WebhookAttemptsSucceeded',
            'WebhookAttemptsFailed',
            'WebhookMessagesFailed',
            'WebhookRetriesParked',
            'WebhookRetriesRequeued',
            'WebhookEndpointsPaused',
            'WebhookMessagesHeld',
            'WebhookMessagesReleased',
            'WebhookPublishFailed',
            'WebhookEventsKept',
            'WebhookEventsRepublished',
            'WebhooksDisabled',
          ] as const
        ).map((name) => monitoring.counter(name)),
        width: 12,
      }),
      new GraphWidget({
        title: 'Webhook delivery queue',
        left: [
          this.queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
          this.queue.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum' }),
          depth(this.deadLetterQueue),
        ],
        width: 12,
      }),
    );
  }
}
