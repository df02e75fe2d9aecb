import { Duration } from 'aws-cdk-lib';
import { MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** A queue as the service makes every queue: encrypted at rest (SQS-managed), refusing plain HTTP. */
export const secureQueue = (scope: Construct, id: string, props: QueueProps = {}) =>
  new Queue(scope, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, ...props });

/**
 * How many messages a queue holds, visible or not: a dead-letter queue's depth. (The sweeper reads
 * the send dead-letter queue without deleting and hides what it read, so the visible count alone
 * drops to zero within a minute of a message arriving.)
 */
export const depth = (queue: Queue, period = Duration.minutes(5)) =>
  new MathExpression({
    expression: 'visible + hidden',
    usingMetrics: {
      visible: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period }),
      hidden: queue.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum', period }),
    },
    label: `${queue.node.id} depth`,
    period,
  });
