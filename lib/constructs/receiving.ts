import { Annotations, ArnFormat, CustomResource, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { GraphWidget, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RECEIVING_REGIONS, receivesIn } from '../../functions/domains/receiving-regions.js';
import { RAW_PREFIX } from '../../functions/receiving/model.js';
import { domainConfigurationSetPrefix } from '../domain-set-prefixes.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import { depth, secureQueue } from './queues.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

/**
 * The names of this stack's receipt rules in SES: its own rule set (made only when the account has
 * none active) and the prefix of its rules (`<prefix>-1`, `<prefix>-2`…, wherever they sit), from
 * the stack's prefix (its name and a digest of it: lib/domain-set-prefixes.ts), so two stacks in
 * one account never share a rule or a grant. Rules are `<prefix>-receive-<n>`.
 */
export function receivingNames(stackName: string) {
  const rulePrefix = domainConfigurationSetPrefix(stackName).slice(0, -1);
  // As the writer names them (functions/receiving/rules.ts: ruleName, ownRuleSetName).
  return { ruleSet: `${rulePrefix}-receiving`, rulePrefix, rules: `${rulePrefix}-receive-*` };
}

/**
 * The ARN of every receipt rule of ours, in any rule set of this account and Region: our rules may
 * sit in a set that is not ours (the account's active one, when it had one: design38.md), so the
 * set's name is left open and the rule's name is not. SES's documented form:
 * `arn:aws:ses:<region>:<account>:receipt-rule-set/<set>:receipt-rule/<rule>` (Amazon SES
 * Developer Guide, "Giving permissions to Amazon SES for email receiving").
 */
export function receiptRuleArnPattern(stack: Stack, rules: string): string {
  return stack.formatArn({
    service: 'ses',
    resource: 'receipt-rule-set',
    resourceName: `*:receipt-rule/${rules}`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}

/**
 * Whether the stack receives mail: its Region is one where SES receives. A stack whose Region is
 * not known at synth (env-agnostic) does not. Either way the synth says why receiving is off.
 */
export function receivingIn(stack: Stack): boolean {
  const region = stack.region;
  const off = Token.isUnresolved(region)
    ? "the stack's Region is not known at synth time (deploy with the CDK CLI's credentials, which set CDK_DEFAULT_REGION)"
    : receivesIn(region)
      ? undefined
      : `SES does not receive mail in ${region}`;
  if (off)
    Annotations.of(stack).addInfo(
      `Receiving is off: ${off}. SES receives in ${RECEIVING_REGIONS.join(', ')}.`,
    );
  return off === undefined;
}

export interface ReceivingProps {
  /** The table, the webhook queue and the settings its functions read. */
  readonly resources: ServiceResources & { readonly webhookQueue: Queue };
  /** The content bucket, whose `received/raw/` SES writes to. */
  readonly bucket: Bucket;
  readonly monitoring: Monitoring;
  /** Where its functions are deployed (the `receiving` concept's stack). */
  readonly functions: ConceptStacks;
}

/** How many times Lambda retries a failed asynchronous invocation of receive-email before its failure destination. */
export const RECEIVE_RETRY_ATTEMPTS = 2;

/**
 * Receiving mail through SES, where SES receives (the stack makes this only in
 * RECEIVING_REGIONS): SES's receipt rule writes each message to the content bucket under
 * `received/raw/` and invokes receive-email (asynchronously: Lambda retries it twice, then
 * records it in the failure destination, which sweep-received reads every 5 minutes, with the raw
 * objects no received email came of). The rules' recipients belong to the running service, not
 * to CloudFormation: a custom resource (set-up-receiving) makes the first rule once, and one
 * writer (sync-receipt-rules, fed by a FIFO queue, one message at a time) keeps them equal to the
 * domains with receiving enabled. Its alarms: a message failed for good and waits for the sweep;
 * the rule writer's messages keep failing; the account's active rule set no longer holds our rules.
 */
export class Receiving extends Construct {
  public readonly receiver: ServiceFunction;
  public readonly sweeper: ServiceFunction;
  public readonly ruleWriter: ServiceFunction;
  public readonly setUp: ServiceFunction;
  /** The writer's queue (FIFO: one message group, so one writer at a time) and its dead-letter queue. */
  public readonly ruleQueue: Queue;
  public readonly ruleDeadLetterQueue: Queue;
  /** Where receive-email's asynchronous invocations that failed for good are recorded. */
  public readonly failures: Queue;
  /** The custom resource that makes our first rule (and our rule set, when none is active). */
  public readonly rules: CustomResource;
  public readonly names: ReturnType<typeof receivingNames>;
  /** Its functions: the parser, the sweep, the rule writer and the custom resource's. */
  public get functions(): ServiceFunction[] {
    return [this.receiver, this.sweeper, this.ruleWriter, this.setUp];
  }

  constructor(scope: Construct, id: string, props: ReceivingProps) {
    super(scope, id);
    const { bucket, monitoring, functions } = props;
    const stack = Stack.of(this);
    this.names = receivingNames(stack.stackName);
    const ruleArns = receiptRuleArnPattern(stack, this.names.rules);

    // The writer runs one rule call a second: 200 rules (SES's most a set) put and checked take
    // minutes. Six times its timeout, as Lambda advises for a queue a function consumes.
    const writerTimeout = Duration.minutes(10);
    this.ruleDeadLetterQueue = secureQueue(this, 'RuleDeadLetterQueue', {
      fifo: true,
      retentionPeriod: Duration.days(14),
    });
    this.ruleQueue = secureQueue(this, 'RuleQueue', {
      fifo: true,
      visibilityTimeout: Duration.seconds(writerTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.ruleDeadLetterQueue, maxReceiveCount: 5 },
    });
    this.failures = secureQueue(this, 'FailedReceipts', { retentionPeriod: Duration.days(14) });
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "It is itself where failed invocations end (receive-email's failure destination): the sweep deletes what it processed, and what it cannot process stays here, alarmed on, while its raw message stays in the bucket.",
    });
    const resources: ServiceResources = {
      ...props.resources,
      contentBucket: bucket,
      receiptRuleQueue: this.ruleQueue,
      receivedFailures: this.failures,
    };

    // A message of up to 40 MB (SES's limit), its attachments decoded beside it: memory for about
    // four copies of it, and the CPU that comes with it; a parse and its writes in well under 2 minutes.
    const parsing = { memorySize: 1536, timeout: Duration.minutes(2) };
    this.receiver = functions.add('receive-email', parsing).bind(resources);
    // Lambda sends an invocation that failed for good to the destination with the function's role:
    // SendMessage alone (CDK's SqsDestination would grant reading the queue's attributes too).
    const failures = this.failures;
    this.receiver.function.configureAsyncInvoke({
      retryAttempts: RECEIVE_RETRY_ATTEMPTS,
      onFailure: {
        bind: (_scope, fn) => {
          fn.addToRolePolicy(
            new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [failures.queueArn] }),
          );
          return { destination: failures.queueArn };
        },
      },
    });
    // SES invokes it for our rules only, from this account (SES's documented permission, with the
    // rule's ARN: its set is left open, as our rule may sit in the account's active set).
    this.receiver.function.addPermission('InvokedBySes', {
      principal: new ServicePrincipal('ses.amazonaws.com'),
      sourceAccount: stack.account,
      sourceArn: ruleArns,
    });
    const invokedBySes = this.receiver.function.node.findChild('InvokedBySes');

    this.sweeper = functions
      .add('sweep-received', { memorySize: parsing.memorySize, timeout: Duration.minutes(4) })
      .bind(resources);
    this.sweeper.runEvery(
      Duration.minutes(5),
      'Processes received messages that failed for good, and raw ones that became no received email',
    );

    // SES writes the raw message under received/raw/, for this account's rules of ours only.
    const bucketPolicy = bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'SesWritesReceivedMail',
        principals: [new ServicePrincipal('ses.amazonaws.com')],
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects(`${RAW_PREFIX}*`)],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': ruleArns },
        },
      }),
    );

    // A Create tries a rule SES refuses for about a minute; an Update rewrites outdated rules one a
    // second until 90 s are left (functions/receiving/set-up.ts UPDATE_RESERVE_MS), then leaves the
    // rest to the writer: 5 minutes lets an Update rewrite some 200 (SES's most a set) itself.
    this.setUp = functions.add('set-up-receiving', { timeout: Duration.minutes(5) }).bind(resources);
    this.rules = new CustomResource(functions.stackOf('receiving'), 'ReceiptRules', {
      serviceToken: this.setUp.function.functionArn,
      resourceType: 'Custom::ReceiptRules',
      properties: {
        RuleSetName: this.names.ruleSet,
        RulePrefix: this.names.rulePrefix,
        BucketName: bucket.bucketName,
        ObjectKeyPrefix: RAW_PREFIX,
        FunctionArn: this.receiver.function.functionArn,
        SyncQueueUrl: this.ruleQueue.queueUrl,
      },
    });
    // SES checks, when a rule is created, that it may write to the bucket and invoke the function.
    this.rules.node.addDependency(invokedBySes);
    if (bucketPolicy.policyDependable) this.rules.node.addDependency(bucketPolicy.policyDependable);

    this.ruleWriter = functions
      .add('sync-receipt-rules', { timeout: writerTimeout })
      .bind({ ...resources, settings: { ...resources.settings, CONTENT_BUCKET: bucket.bucketName } })
      // The set our rules are in: ours, or the account's active one the custom resource added them to.
      .setEnvironment('RECEIPT_RULE_SET', this.rules.getAttString('RuleSet'))
      .setEnvironment('RECEIPT_RULE_PREFIX', this.names.rulePrefix)
      .setEnvironment('RECEIVE_FUNCTION_ARN', this.receiver.function.functionArn);
    this.ruleWriter.function.addEventSource(
      new SqsEventSource(this.ruleQueue, { batchSize: 1, reportBatchItemFailures: true }),
    );

    monitoring.alarm('ReceivedMailFailed', depth(this.failures), {
      threshold: 1,
      evaluationPeriods: 3,
      alarmDescription: `Received messages whose processing failed ${RECEIVE_RETRY_ATTEMPTS + 1} times stayed 15 minutes in receive-email's failure destination: sweep-received has not processed them (see its logs and receive-email's). Nothing is lost: the raw messages stay under received/raw/.`,
    });
    monitoring.alarm('ReceiptRuleDeadLetters', depth(this.ruleDeadLetterQueue), {
      threshold: 1,
      alarmDescription:
        "The receipt-rule writer failed 5 times on a message (see sync-receipt-rules' logs): SES's rules may not follow the domains until the next sync (while any domain receives, the scheduled domain check queues one about every 2 minutes).",
    });
    const notActive = new Metric({
      namespace: monitoring.namespace,
      metricName: 'ReceiptRuleSetNotActive',
      dimensionsMap: { service: monitoring.serviceName },
      statistic: 'Maximum',
      period: Duration.hours(1),
    });
    monitoring.alarm('ReceiptRuleSetNotActive', notActive, {
      threshold: 1,
      alarmDescription:
        "The account's active receipt rule set no longer holds our receipt rules (another set was activated): no mail is received for the domains. The domains' Receiving records say so; docs/operations.md says what to do.",
    });
    monitoring.addRow(
      'queues',
      new GraphWidget({
        title: 'Receiving',
        left: [this.failures, this.ruleQueue, this.ruleDeadLetterQueue].map((queue) =>
          queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: queue.node.id }),
        ),
        right: [notActive],
        width: 12,
      }),
      new GraphWidget({
        title: 'Received mail',
        left: (['EmailsReceived', 'ReceivedUnparsed', 'ReceivedVirus', 'ReceivedSwept'] as const).map(
          (name) => monitoring.counter(name),
        ),
        width: 12,
      }),
    );
    monitoring.watchFunctions(
      'Receiving',
      this.functions,
      'Receiving: the parser, its sweep, the rule writer and the rules’ custom resource',
    );
  }
}
