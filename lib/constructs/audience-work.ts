import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FUNCTIONS, type FunctionName } from '../../functions/catalog.js';
import {
  AUDIENCE_QUEUES,
  type AudienceQueueSettings,
  visibilitySecondsOf,
} from '../../functions/shared/audience-queues.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface AudienceWorkProps {
  /** What its workers are bound to (the table, the content bucket, the webhook queue, the settings). */
  readonly resources: Omit<ServiceResources, 'contactImportQueue' | 'audienceCleanupQueue'>;
  readonly monitoring: Monitoring;
  /** Where its functions are deployed (each in its concept's stack). */
  readonly functions: ConceptStacks;
}

/**
 * The audience's work off the request path: the contact imports' queue (one message per step of
 * an import: a chunk of the CSV read from its byte offset, written with its checkpoint) and the
 * audience clean-up queue (one message per page of what a deleted contact, segment or topic leaves
 * behind), each with its dead-letter queue and the function that consumes it one message at a time
 * (functions/shared/audience-queues.ts: timeouts, receives, concurrency). A step that keeps
 * crashing goes to the dead-letter queue after AUDIENCE_QUEUES' receives, which raises an alarm.
 * The queues are granted to the functions that declare them (their access in routes.ts/workers.ts).
 * A worker the catalog does not declare gets no function (its queue waits for it).
 */
export class AudienceWork extends Construct {
  public readonly importQueue: Queue;
  public readonly importDeadLetterQueue: Queue;
  public readonly cleanupQueue: Queue;
  public readonly cleanupDeadLetterQueue: Queue;
  /** The consumers the catalog declares: import-contacts, clean-up-audience. */
  public readonly workers: readonly ServiceFunction[];

  constructor(scope: Construct, id: string, props: AudienceWorkProps) {
    super(scope, id);
    const queueOf = (name: string, settings: AudienceQueueSettings) => {
      const deadLetterQueue = secureQueue(this, `${name}DeadLetterQueue`, {
        retentionPeriod: Duration.days(14),
      });
      const queue = secureQueue(this, `${name}Queue`, {
        visibilityTimeout: Duration.seconds(visibilitySecondsOf(settings)),
        retentionPeriod: Duration.days(4),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
      });
      return { queue, deadLetterQueue };
    };
    const imports = queueOf('ContactImports', AUDIENCE_QUEUES.contactImports);
    const cleanup = queueOf('AudienceCleanup', AUDIENCE_QUEUES.audienceCleanup);
    this.importQueue = imports.queue;
    this.importDeadLetterQueue = imports.deadLetterQueue;
    this.cleanupQueue = cleanup.queue;
    this.cleanupDeadLetterQueue = cleanup.deadLetterQueue;
    const resources: ServiceResources = {
      ...props.resources,
      contactImportQueue: imports.queue,
      audienceCleanupQueue: cleanup.queue,
    };
    const workers: ServiceFunction[] = [];
    for (const [settings, queue] of [
      [AUDIENCE_QUEUES.contactImports, imports.queue],
      [AUDIENCE_QUEUES.audienceCleanup, cleanup.queue],
    ] as const) {
      if (!(settings.worker in FUNCTIONS)) continue;
      const worker = props.functions
        .add(settings.worker as FunctionName, { timeout: Duration.seconds(settings.timeoutSeconds) })
        .bind(resources);
      worker.function.addEventSource(
        new SqsEventSource(queue, {
          batchSize: settings.batchSize,
          reportBatchItemFailures: true,
          maxConcurrency: settings.maxConcurrency,
        }),
      );
      workers.push(worker);
    }
    this.workers = workers;

    props.monitoring.alarm('ContactImportDeadLetters', depth(imports.deadLetterQueue), {
      threshold: 1,
      alarmDescription:
        "A step of a contact import kept failing and is in the contact imports' dead-letter queue: the import stays `in_progress` at its last checkpoint (see import-contacts' logs; sending the message back to the queue resumes it there).",
    });
    props.monitoring.alarm('AudienceCleanupDeadLetters', depth(cleanup.deadLetterQueue), {
      threshold: 1,
      alarmDescription:
        "A page of an audience clean-up (a deleted contact's, segment's or topic's memberships and choices) kept failing and is in its dead-letter queue (see clean-up-audience's logs; sending it back resumes it).",
    });
  }
}
