import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IConfigurationSet } from 'aws-cdk-lib/aws-ses';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { EnvKey } from '../../functions/catalog.js';

/**
 * The names of domains' own sets: the stack's prefix and a domain id (`dom_…`), so another stack
 * whose name starts with this one's (EmailService-Staging) is not covered.
 */
export const domainSetPattern = (prefix: string) => `${prefix}dom_*`;

/** Domains' own configuration sets: how they are named, and where their events go. */
export interface DomainConfigurationSets {
  readonly prefix: string;
  readonly eventsTopic: ITopic;
  /**
   * The prefix versions before the stack name's digest named sets by (the name cut to 33
   * characters), granted beside `prefix` while such sets may exist (docs/operations.md, "Upgrading").
   * @default none
   */
  readonly legacyPrefix?: string;
}

/** Every prefix domains' sets of this stack may be named by: the current one, and the legacy one while kept. */
export const domainSetPrefixes = (sets: DomainConfigurationSets): string[] =>
  sets.legacyPrefix && sets.legacyPrefix !== sets.prefix ? [sets.prefix, sets.legacyPrefix] : [sets.prefix];

/** What functions are bound to: the stack's resources, and the values of its settings. */
export interface ServiceResources {
  readonly table: ITable;
  readonly sendQueue?: IQueue;
  readonly sendDeadLetterQueue?: IQueue;
  readonly configurationSet?: IConfigurationSet;
  /**
   * Domains' own configuration sets, made at run time: the prefix of their names (IAM grants
   * `<prefix>dom_*`), the topic their events go to (the stack's events topic), and while sets
   * named by the older prefix may exist, that prefix too (granted the same, named by no function).
   */
  readonly domainConfigurationSets?: DomainConfigurationSets;
  /** The webhook delivery queue (functions that raise events send to it). */
  readonly webhookQueue?: IQueue;
  /**
   * The receipt-rule writer's FIFO queue, where the stack receives (absent elsewhere: functions
   * that would ask the writer to follow get no grant, and domains cannot enable receiving).
   */
  readonly receiptRuleQueue?: IQueue;
  /** The bucket attachments and large bodies are kept in. */
  readonly contentBucket?: IBucket;
  /** The failure destination of receive-email's asynchronous invocations. */
  readonly receivedFailures?: IQueue;
  /** The contact imports' queue (one message per import step: contact-imports). */
  readonly contactImportQueue?: IQueue;
  /** The audience clean-up queue (what a deleted contact, segment or topic leaves behind). */
  readonly audienceCleanupQueue?: IQueue;
  /** The broadcasts' fan-out queue (one message per broadcast step: lib/constructs/broadcast-work.ts). */
  readonly broadcastFanOutQueue?: IQueue;
  /** The broadcast lane: broadcast emails' send jobs (lib/constructs/send-pipeline.ts). */
  readonly broadcastSendQueue?: IQueue;
  /** The broadcast lane's dead-letter queue (the sweeper reads it). */
  readonly broadcastLaneDeadLetterQueue?: IQueue;
  /** The secret holding the unsubscribe links' signing keys (functions/unsubscribe/keys.ts). */
  readonly unsubscribeKeys?: ISecret;
  /** Values of the environment variables that are settings rather than resources (limits, timings). */
  readonly settings: Partial<Record<EnvKey, string>>;
}
