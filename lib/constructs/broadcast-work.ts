import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FUNCTIONS, type FunctionName } from '../../functions/catalog.js';
import { BROADCAST_FANOUT_QUEUE, visibilitySecondsOf } from '../../functions/shared/audience-queues.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface BroadcastWorkProps {
  /** What its worker is bound to (the table, the broadcast lane, the unsubscribe keys, the settings). */
  readonly resources: Omit<ServiceResources, 'broadcastFanOutQueue'>;
  readonly monitoring: Monitoring;
  /** Where its functions are deployed (each in its concept's stack). */
  readonly functions: ConceptStacks;
}

/**
 * The broadcasts' fan-out (issue 41): its queue, one message per step of a broadcast (a page of its
 * segment made into emails and put on the broadcast lane, or a wait for its time, its quota or its
 * lane; functions/shared/audience-queues.ts BROADCAST_FANOUT_QUEUE), its dead-letter queue and
 * alarm, and `fan-out-broadcast`, consuming it one message at a time, once the catalog declares it.
 * The lane itself is the send pipeline's (lib/constructs/send-pipeline.ts), beside the send queue.
 */
export class BroadcastWork extends Construct {
  public readonly fanOutQueue: Queue;
  public readonly fanOutDeadLetterQueue: Queue;
  /** The fan-out worker, when the catalog declares it (none, or one). */
  public readonly workers: readonly ServiceFunction[];

  constructor(scope: Construct, id: string, props: BroadcastWorkProps) {
    super(scope, id);
    const settings = BROADCAST_FANOUT_QUEUE;
    this.fanOutDeadLetterQueue = secureQueue(this, 'FanOutDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
    });
    this.fanOutQueue = secureQueue(this, 'FanOutQueue', {
      visibilityTimeout: Duration.seconds(visibilitySecondsOf(settings)),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.fanOutDeadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
    });
    const workers: ServiceFunction[] = [];
    if (settings.worker in FUNCTIONS) {
      const worker = props.functions
        .add(settings.worker as FunctionName, { timeout: Duration.seconds(settings.timeoutSeconds) })
        .bind({ ...props.resources, broadcastFanOutQueue: this.fanOutQueue });
      worker.function.addEventSource(
        new SqsEventSource(this.fanOutQueue, {
          batchSize: settings.batchSize,
          reportBatchItemFailures: true,
          maxConcurrency: settings.maxConcurrency,
        }),
      );
      workers.push(worker);
    }
    this.workers = workers;
    props.monitoring.alarm('BroadcastFanOutDeadLetters', depth(this.fanOutDeadLetterQueue), {
      threshold: 1,
      alarmDescription:
        "A step of a broadcast's fan-out kept failing and is in the fan-out dead-letter queue: the broadcast stays at its last checkpoint (see fan-out-broadcast's logs; sending the message back to the queue resumes it there).",
    });
  }
}
