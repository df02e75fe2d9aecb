import { type CfnElement, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Function as LambdaFunction,
  ParamsAndSecretsLayerVersion,
  ParamsAndSecretsVersions,
  Runtime,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IConfigurationSet } from 'aws-cdk-lib/aws-ses';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { parseLayout } from '../../functions/adapters/dynamodb/email-keys.js';
import { INDEXES } from '../../functions/adapters/dynamodb/table.js';
import { type EnvKey, type FunctionName, type FunctionSpec, specOf } from '../../functions/catalog.js';
import { RAW_PREFIX } from '../../functions/receiving/model.js';
import { functionCode } from '../function-code.js';
import type { ServiceFunctionProps } from './function-props.js';
import {
  type DomainConfigurationSets,
  domainSetPattern,
  domainSetPrefixes,
  type ServiceResources,
} from './function-resources.js';
import { QUEUE_ACCESS } from './queue-access.js';
import { deployedStack, nagReference } from './stack-of.js';

export type { FunctionLogging, ServiceFunctionProps } from './function-props.js';
export { type DomainConfigurationSets, domainSetPattern, domainSetPrefixes, type ServiceResources };

/**
 * What runs the service's code under one catalog entry: a role granted exactly what the entry asks
 * for, and the environment its wiring reads. Its access and environment come from the entry through
 * `bind`, or one grant at a time; each grant sets the matching variable in the same call. The synth
 * fails if a variable its wiring reads is left unset. A Lambda function (ServiceFunction, below) is
 * one; the SMTP relay's container (lib/constructs/smtp-relay.ts) is another, so its task role is
 * granted by this same code what the send path's function is.
 */
export abstract class SpecAccess extends Construct {
  public abstract readonly role: Role;
  /** Its catalog entry: what its code reads and calls. */
  public readonly spec: FunctionSpec;
  public readonly name: string;

  constructor(scope: Construct, id: string, name: string, spec: FunctionSpec) {
    super(scope, id);
    this.name = name;
    this.spec = spec;
    this.node.addValidation({
      validate: () => {
        const unset = this.spec.env.filter((key) => !this.set.has(key));
        return unset.length
          ? [`${name} reads ${unset.join(', ')} (functions/catalog.ts), which nothing sets`]
          : [];
      },
    });
  }

  private readonly set = new Set<EnvKey>();

  /** Puts a variable in what runs its code (the function's or the container's environment). */
  protected abstract addEnvironment(key: EnvKey, value: string): void;

  /** Sets a variable its wiring reads; one it does not read is refused (no stray configuration). */
  setEnvironment(key: EnvKey, value: string): this {
    // The table's layout goes wherever the table does.
    const reads = key === 'TABLE_LAYOUT' ? this.spec.env.includes('TABLE_NAME') : false;
    if (!reads && !this.spec.env.includes(key) && !this.spec.optionalEnv?.includes(key))
      throw new Error(`${this.name} does not read ${key} (functions/catalog.ts): refusing to set it`);
    this.addEnvironment(key, value);
    this.set.add(key);
    return this;
  }

  /**
   * Exactly the DynamoDB actions of its entry, on the table and on the indexes it queries by name
   * (the time index by the name the table layout gives it: it changes in the upgrade to keys-only),
   * with the table's name and layout.
   */
  grantTable(table: ITable, layout?: string): this {
    const { actions, indexes = [] } = this.spec.table;
    // A function that reads no table (a public page) gets neither access nor its name.
    if (actions.length === 0) return this;
    const timeIndex = layout ? parseLayout(layout).timeIndex : INDEXES.emailsByTime.name;
    const named = indexes.map((name) => (name === INDEXES.emailsByTime.name ? timeIndex : name));
    this.role.addToPolicy(
      new PolicyStatement({
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn, ...named.map((name) => `${table.tableArn}/index/${name}`)],
      }),
    );
    if (layout) this.setEnvironment('TABLE_LAYOUT', layout);
    return this.setEnvironment('TABLE_NAME', table.tableName);
  }

  /**
   * Exactly its entry's actions on the send queue (sending, and reading the backlog). The queue is
   * encrypted with an SQS-owned key, so no KMS grant goes with them.
   */
  grantSendQueue(queue: IQueue): this {
    this.role.addToPolicy(
      new PolicyStatement({
        actions: (this.spec.sendQueue ?? []).map((action) => `sqs:${action}`),
        resources: [queue.queueArn],
      }),
    );
    return this.setEnvironment('SEND_QUEUE_URL', queue.queueUrl);
  }

  /** Its entry's actions on the send queue's dead-letter queue. */
  grantSendDeadLetters(queue: IQueue): this {
    this.role.addToPolicy(
      new PolicyStatement({
        actions: (this.spec.sendDeadLetters ?? []).map((action) => `sqs:${action}`),
        resources: [queue.queueArn],
      }),
    );
    return this.setEnvironment('SEND_DEAD_LETTER_QUEUE_URL', queue.queueUrl);
  }

  /** Exactly its entry's actions on the webhook delivery queue (SQS-owned key: no KMS grant). */
  grantWebhookQueue(queue: IQueue): this {
    this.role.addToPolicy(
      new PolicyStatement({
        actions: (this.spec.webhookQueue ?? []).map((action) => `sqs:${action}`),
        resources: [queue.queueArn],
      }),
    );
    return this.setEnvironment('WEBHOOK_QUEUE_URL', queue.queueUrl);
  }

  /**
   * Exactly its entry's S3 actions on the content bucket, each on its prefix's objects only. The
   * bucket is encrypted with S3-managed keys, so no KMS grant goes with them.
   */
  grantContent(bucket: IBucket): this {
    const bucketArn = nagReference(this, bucket.node.defaultChild as CfnElement, 'Arn');
    for (const [prefix, actions] of Object.entries(this.spec.content ?? {})) {
      this.role.addToPolicy(
        new PolicyStatement({
          actions: [...(actions ?? [])],
          resources: [bucket.arnForObjects(`${prefix}*`)],
        }),
      );
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${bucketArn}/${prefix}*]`,
        reason: `Objects are named by email at run time: limited to the ${prefix} prefix of the content bucket.`,
      });
    }
    return this.setEnvironment('CONTENT_BUCKET', bucket.bucketName);
  }

  /**
   * ses:SendEmail, from this account's identities and with this configuration set only, or with a
   * domain's own set (named by the stack's prefix); with `raw`, ses:SendRawEmail on the same, which
   * IAM checks for an SES v2 SendEmail with raw content (an SMTP email, sent as its MIME: AWS's
   * "not authorized to perform ses:SendRawEmail" answers to v2 raw sends, reported in
   * anymail/django-anymail#384 and aws/aws-actionmailer-ses-ruby#10).
   */
  grantSendEmail(
    configurationSet: IConfigurationSet,
    domainSets?: DomainConfigurationSets,
    raw = false,
  ): this {
    const prefixes = domainSets ? domainSetPrefixes(domainSets) : [];
    const stack = Stack.of(this);
    this.role.addToPolicy(
      new PolicyStatement({
        actions: raw ? ['ses:SendEmail', 'ses:SendRawEmail'] : ['ses:SendEmail'],
        resources: [
          this.identities(),
          stack.formatArn({
            service: 'ses',
            resource: 'configuration-set',
            resourceName: configurationSet.configurationSetName,
          }),
          ...prefixes.map((prefix) => this.domainConfigurationSets(prefix)),
        ],
      }),
    );
    this.acknowledgeIdentities(
      "ses:SendEmail and ses:SendRawEmail are authorised against the identity of each email's sender, chosen at run time: they are limited to " +
        "this account's identities in this region and to this stack's configuration sets.",
    );
    for (const prefix of prefixes) this.acknowledgeDomainSets(prefix);
    return this.setEnvironment('CONFIGURATION_SET_NAME', configurationSet.configurationSetName);
  }

  /**
   * Its entry's actions on domains' own configuration sets (named by the stack's prefix), with
   * the prefix and the events topic their event destination names.
   */
  grantConfigurationSets(sets: DomainConfigurationSets): this {
    const prefixes = domainSetPrefixes(sets);
    this.role.addToPolicy(
      new PolicyStatement({
        actions: (this.spec.configurationSets ?? []).map((action) => `ses:${action}`),
        resources: prefixes.map((prefix) => this.domainConfigurationSets(prefix)),
      }),
    );
    for (const prefix of prefixes) this.acknowledgeDomainSets(prefix);
    return this.setDomainSetEnvironment(sets);
  }

  /** How domains' sets are named and where their events go, for a function that names them. */
  setDomainSetEnvironment(sets: DomainConfigurationSets): this {
    this.setEnvironment('SES_EVENTS_TOPIC_ARN', sets.eventsTopic.topicArn);
    return this.setEnvironment('DOMAIN_CONFIGURATION_SET_PREFIX', sets.prefix);
  }

  /** Its entry's SES identity actions, on this account's identities in this region. */
  grantIdentities(): this {
    this.role.addToPolicy(
      new PolicyStatement({
        actions: (this.spec.identities ?? []).map((action) => `ses:${action}`),
        resources: [this.identities()],
      }),
    );
    this.acknowledgeIdentities(
      "Sending domains are added at run time, so their SES identities cannot be named in advance: limited to this account's identities in this region.",
    );
    return this;
  }

  /**
   * ses:DeleteSuppressedDestination: SES's account-level suppression list is one per account and
   * has no resource type in IAM, so the action is granted on `*`, and on nothing else.
   */
  grantSesSuppressions(): this {
    this.role.addToPolicy(
      new PolicyStatement({ actions: ['ses:DeleteSuppressedDestination'], resources: ['*'] }),
    );
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "ses:DeleteSuppressedDestination acts on the account's one suppression list, which IAM has no resource type for; it is the only action granted on *.",
    });
    return this;
  }

  /** ses:GetAccount (the account's sending limits): IAM has no resource type for it, so `*`. */
  grantSesAccount(): this {
    this.role.addToPolicy(new PolicyStatement({ actions: ['ses:GetAccount'], resources: ['*'] }));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "ses:GetAccount reads the account's sending quota, which IAM has no resource type for; it is read-only.",
    });
    return this;
  }

  /** Exactly its entry's actions on a queue other than the send and webhook queues, and the queue's URL. */
  grantQueue(queue: IQueue, actions: readonly string[], urlKey: EnvKey): this {
    this.role.addToPolicy(
      new PolicyStatement({ actions: actions.map((action) => `sqs:${action}`), resources: [queue.queueArn] }),
    );
    return this.setEnvironment(urlKey, queue.queueUrl);
  }

  /**
   * The unsubscribe links' signing keys: read (GetSecretValue), or rotate (rotate-unsubscribe-keys,
   * which reads them and puts the new list: functions/unsubscribe/keys.ts), on this secret only;
   * its ARN, never its value, in the environment.
   */
  grantUnsubscribeKeys(secret: ISecret): this {
    const actions =
      this.spec.unsubscribeKeys === 'rotate' ? ['GetSecretValue', 'PutSecretValue'] : ['GetSecretValue'];
    this.role.addToPolicy(
      new PolicyStatement({
        actions: actions.map((action) => `secretsmanager:${action}`),
        resources: [secret.secretArn],
      }),
    );
    // Set where the function reads it (a function given the secret by its event would not).
    if (!this.spec.env.includes('UNSUBSCRIBE_KEYS_SECRET')) return this;
    return this.setEnvironment('UNSUBSCRIBE_KEYS_SECRET', secret.secretArn);
  }

  /** Its entry's SES receipt-rule actions: IAM has no resource type for them (function-spec.ts), so `*`. */
  grantReceiptRules(): this {
    this.role.addToPolicy(
      new PolicyStatement({
        actions: (this.spec.receiptRules ?? []).map((action) => `ses:${action}`),
        resources: ['*'],
      }),
    );
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "SES's receipt-rule actions (v1 API) have no resource type in IAM (Service Authorization Reference, Amazon SES): only the receipt-rule actions the function calls are granted on *.",
    });
    return this;
  }

  /** s3:ListBucket on the content bucket for keys under `received/raw/` only (s3:prefix). */
  grantListReceivedRaw(bucket: IBucket): this {
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${RAW_PREFIX}*`] } },
      }),
    );
    return this.setEnvironment('CONTENT_BUCKET', bucket.bucketName);
  }

  /**
   * Everything its catalog entry asks for, from these resources; a resource it needs that is not
   * given fails the synth. Settings fill the variables no grant sets.
   */
  bind(resources: ServiceResources): this {
    const need = <T>(resource: T | undefined, what: string): T => {
      if (!resource) throw new Error(`${this.name} needs ${what}, which was not given to it`);
      return resource;
    };
    this.grantTable(resources.table, resources.settings.TABLE_LAYOUT);
    if (this.spec.sendQueue) this.grantSendQueue(need(resources.sendQueue, 'the send queue'));
    if (this.spec.sendDeadLetters)
      this.grantSendDeadLetters(need(resources.sendDeadLetterQueue, "the send queue's dead-letter queue"));
    if (this.spec.sendsEmail)
      this.grantSendEmail(
        need(resources.configurationSet, 'the configuration set'),
        resources.domainConfigurationSets,
        this.spec.sendsRawEmail === true,
      );
    if (this.spec.identities) this.grantIdentities();
    if (this.spec.configurationSets)
      this.grantConfigurationSets(need(resources.domainConfigurationSets, "domains' configuration sets"));
    else if (this.spec.env.includes('DOMAIN_CONFIGURATION_SET_PREFIX'))
      // Names them without calling SES on them (delete-domain retires its domain's set).
      this.setDomainSetEnvironment(need(resources.domainConfigurationSets, "domains' configuration sets"));
    if (this.spec.sesSuppressions) this.grantSesSuppressions();
    if (this.spec.sesAccount) this.grantSesAccount();
    if (this.spec.webhookQueue)
      this.grantWebhookQueue(need(resources.webhookQueue, 'the webhook delivery queue'));
    if (this.spec.content) this.grantContent(need(resources.contentBucket, 'the content bucket'));
    if (this.spec.receiptRules) this.grantReceiptRules();
    // Only where the stack receives (elsewhere there is no queue, and the URL stays unset).
    if (this.spec.receiptRuleQueue && resources.receiptRuleQueue)
      this.grantQueue(resources.receiptRuleQueue, this.spec.receiptRuleQueue, 'RECEIPT_RULES_QUEUE_URL');
    // The custom resource's handler: the queue's URL comes with its event (ResourceProperties).
    if (this.spec.receiptRulesQueue)
      this.role.addToPolicy(
        new PolicyStatement({
          actions: this.spec.receiptRulesQueue.map((action) => `sqs:${action}`),
          resources: [need(resources.receiptRuleQueue, "the receipt-rule writer's queue").queueArn],
        }),
      );
    if (this.spec.receivedFailures)
      this.grantQueue(
        need(resources.receivedFailures, "receive-email's failure destination"),
        this.spec.receivedFailures,
        'RECEIVED_FAILURES_QUEUE_URL',
      );
    if (this.spec.listsReceivedRaw)
      this.grantListReceivedRaw(need(resources.contentBucket, 'the content bucket'));
    // The queues granted alike (queue-access.ts): each by its access field.
    for (const [field, { resource, variable, name }] of Object.entries(QUEUE_ACCESS)) {
      const actions = this.spec[field as keyof typeof QUEUE_ACCESS];
      if (actions) this.grantQueue(need(resources[resource], name), actions, variable);
    }
    const { unsubscribeKeys } = this.spec;
    if (unsubscribeKeys)
      this.grantUnsubscribeKeys(need(resources.unsubscribeKeys, "the unsubscribe links' keys"));
    // Optional ones only where a setting turns them on (absent: off).
    for (const key of [...this.spec.env, ...(this.spec.optionalEnv ?? [])])
      if (!this.set.has(key) && resources.settings[key] !== undefined)
        this.setEnvironment(key, resources.settings[key] as string);
    return this;
  }

  private domainConfigurationSets(prefix: string): string {
    return Stack.of(this).formatArn({
      service: 'ses',
      resource: 'configuration-set',
      resourceName: domainSetPattern(prefix),
    });
  }

  private acknowledgeDomainSets(prefix: string) {
    const stack = Stack.of(this);
    const shown = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:${shown(stack.region, 'Region')}:${shown(stack.account, 'AccountId')}:configuration-set/${domainSetPattern(prefix)}]`,
      reason:
        "A domain's own configuration set (TLS policy, tracking host) is made at run time: limited to this stack's prefix.",
    });
  }

  private identities(): string {
    return Stack.of(this).formatArn({ service: 'ses', resource: 'identity', resourceName: '*' });
  }

  /** cdk-nag names the finding by the rendered ARN (pseudo parameters where region/account are tokens). */
  private acknowledgeIdentities(reason: string) {
    const stack = Stack.of(this);
    const shown = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
    const identities = `arn:<AWS::Partition>:ses:${shown(stack.region, 'Region')}:${shown(stack.account, 'AccountId')}:identity/*`;
    Validations.of(this.role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${identities}]`, reason });
  }
}

/**
 * One Lambda function of the service, with what it owns: its log group (30 days; or one given to
 * it), its own role (allowed to write to that log group and nothing else until it is granted
 * more), its schedule if it runs on one, the function built as the stack builds every function
 * (lib/bundling.ts, lib/function-code.ts), and the cdk-nag findings it acknowledges. Its access and environment come as SpecAccess's (above).
 */
export class ServiceFunction extends SpecAccess {
  public readonly function: LambdaFunction;
  public readonly role: Role;
  public readonly logGroup: LogGroup;
  declare public readonly name: FunctionName;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id, props.name, props.spec ?? specOf(props.name));
    this.logGroup =
      props.logGroup ??
      new LogGroup(this, 'Logs', {
        retention: props.logging?.retention ?? RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
    // Its own role, allowed to write to its own log group only (not the managed basic-execution policy).
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    this.function = new LambdaFunction(this, 'Function', {
      code: functionCode(props.name),
      handler: 'index.handler',
      description: this.spec.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      environment: {
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? deployedStack(this).stackName,
        POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace ?? 'EmailService',
        POWERTOOLS_LOG_LEVEL: props.logging?.level ?? 'INFO',
      },
      role: this.role,
      logGroup: this.logGroup,
      // The unsubscribe keys are read through the AWS Parameters and Secrets Lambda Extension's
      // layer, which caches them (adapters/secrets-manager/extension.ts): never in the environment.
      ...(this.spec.unsubscribeKeys === 'read'
        ? {
            paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103, {
              secretsManagerTimeout: Duration.seconds(3),
            }),
          }
        : {}),
    });
    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime this project targets and tests against; moving to 24 is a deliberate change.',
    });
  }

  /**
   * Runs it every `every` (EventBridge), one job each: its own timeout, errors and alarm. Never
   * retried by EventBridge: the next run is the retry.
   */
  runEvery(every: Duration, description: string): Rule {
    return new Rule(this, 'Schedule', {
      description,
      schedule: Schedule.rate(every),
      targets: [new LambdaTarget(this.function, { retryAttempts: 0 })],
    });
  }

  protected addEnvironment(key: EnvKey, value: string): void {
    this.function.addEnvironment(key, value);
  }
}
