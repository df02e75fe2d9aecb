import { App, type CfnElement, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { INDEXES } from '../../functions/adapters/dynamodb/table.js';
import { PUBLISHED_EVENT_TYPES } from '../../functions/adapters/ses/configuration-sets.js';
import { SCHEDULED_FUNCTIONS } from '../../functions/catalog.js';
import { IDEMPOTENCY_LEASE_MS } from '../../functions/emails/idempotency.js';
import { timingProblems } from '../../functions/emails/send-timings.js';
import { API_ROUTES, HEAD_ROUTES, ROUTES } from '../../functions/routes.js';
import { conceptOf } from '../../lib/concepts.js';
import { REQUEST_LOG_FILTER } from '../../lib/constructs/request-logs.js';
import { domainConfigurationSetPrefix } from '../../lib/domain-set-prefixes.js';
import { EmailServiceStack } from '../../lib/email-service-stack.js';
import {
  actionsOf as actionsOfFunction,
  deployedBy,
  logicalId,
  policiesOf as policiesOfFunction,
  resourcesOf,
  synthStack,
  templateOf,
} from '../support/template.js';

let template: Template;
let templates: Map<string, Template>;
let stack: EmailServiceStack;

beforeAll(() => {
  ({ stack, template, templates } = synthStack());
});

const resources = (type: string) => resourcesOf(template, type);
const policiesOf = (functionName: string) => policiesOfFunction(stack, template, functionName);
const actionsOf = (functionName: string) => actionsOfFunction(stack, template, functionName);

/**
 * The audience's nested stacks (issue 40) and the broadcasts' (issue 41), whose grants grants.test.ts
 * (and audience.test.ts) hold exactly.
 */
const AUDIENCE: readonly string[] = ['contacts', 'audiences', 'broadcasts'];

describe('EmailServiceStack', () => {
  it.each([
    ['with an explicit account and region', { account: '123456789012', region: 'eu-west-1' }],
    ['environment-agnostic (as bin/app.ts without CDK_DEFAULT_*)', undefined],
  ])('passes the cdk-nag AwsSolutions checks %s; what it acknowledges says why', (_, env) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const nagged = new EmailServiceStack(app, 'Nagged', { env, alarmEmail: 'ops@example.com' });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
    // Recorded as { "Annotation::<rule id>": "<reason>" }.
    const acknowledged = nagged.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([id, reason]) => ({ id: id.replace(/^Annotation::/, ''), reason }));
    expect(new Set(acknowledged.map((a) => a.id.replace(/\[.*$/, '')))).toEqual(
      // S1: the content bucket has no server access log (see lib/constructs/content-bucket.ts);
      // SQS3: receive-email's failure destination has no dead-letter queue (lib/constructs/receiving.ts).
      new Set([
        'AwsSolutions-L1',
        'AwsSolutions-APIG4',
        'AwsSolutions-IAM5',
        'AwsSolutions-S1',
        // SMG4: the unsubscribe keys rotate by their own function, not Secrets Manager's steps (lib/constructs/unsubscribe-keys.ts).
        'AwsSolutions-SMG4',
        ...(env ? ['AwsSolutions-SQS3'] : []),
      ]),
    );
    for (const a of acknowledged) expect(a.reason.length).toBeGreaterThan(40);
  });

  it('routes each endpoint of the route table to its own function, and everything else to the fallback', () => {
    const routes = resources('AWS::ApiGatewayV2::Route');
    const keys = Object.values(routes)
      .map((r) => r.Properties.RouteKey)
      .sort();
    // A public GET's HEAD route shares its GET's integration (routes.ts HEAD_ROUTES).
    expect(keys).toEqual(
      [
        ...ROUTES.map((r) => `${r.method} ${r.path}`),
        ...HEAD_ROUTES.map((r) => `HEAD ${r.path}`),
        '$default',
      ].sort(),
    );
    const integrations = Object.values(resources('AWS::ApiGatewayV2::Integration')).map((i) =>
      JSON.stringify(i.Properties.IntegrationUri),
    );
    expect(new Set(integrations).size).toBe(ROUTES.length + 1);
  });

  it('uses an HTTP API (HTTPS only; API Gateway has no plain-HTTP listener) with stage throttling', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
  });

  it('runs each scheduled job as a function of its own, on its own schedule, with its own timeout', () => {
    const rules = Object.values(resources('AWS::Events::Rule'));
    const targeted = rules.flatMap((rule) =>
      (rule.Properties.Targets as { Arn: { 'Fn::GetAtt': [string, string] } }[]).map((target) => ({
        fn: target.Arn['Fn::GetAtt'][0],
        schedule: rule.Properties.ScheduleExpression,
      })),
    );
    const byLogicalId = new Map(
      Object.entries(stack.functions).map(([name, fn]) => [logicalId(stack, fn as never), name]),
    );
    // Receiving's sweep runs every 5 minutes (test/infra/receiving.test.ts), the unsubscribe keys'
    // rotation every 30 days (test/infra/unsubscribe-keys.test.ts); the others every minute.
    const everyMinute = targeted.filter(
      (t) => !['sweep-received', 'rotate-unsubscribe-keys'].includes(byLogicalId.get(t.fn) ?? ''),
    );
    expect(everyMinute.map((t) => byLogicalId.get(t.fn)).sort()).toEqual([...SCHEDULED_FUNCTIONS].sort());
    for (const { schedule } of everyMinute) expect(schedule).toBe('rate(1 minute)');
    const functions = resources('AWS::Lambda::Function');
    for (const name of SCHEDULED_FUNCTIONS)
      expect(functions[logicalId(stack, stack.functions[name] as never)]?.Properties.Timeout, name).toBe(60);
  });

  it('bundles every function for Node 22 on arm64', () => {
    const functions = Object.values(resources('AWS::Lambda::Function'));
    // one per route + fallback + send consumer + SES events consumer + webhook delivery +
    // request-log writer + each scheduled job + receiving's four + the contact imports' and the
    // audience clean-up's consumers and the unsubscribe keys' rotation + the broadcasts' fan-out and
    // the broadcast lane's consumer (+ none other)
    expect(functions.filter((f) => f.Properties.Runtime === 'nodejs22.x')).toHaveLength(
      ROUTES.length + 5 + SCHEDULED_FUNCTIONS.length + 4 + 3 + 2,
    );
    for (const fn of functions.filter((f) => f.Properties.Runtime === 'nodejs22.x')) {
      expect(fn.Properties.Architectures).toEqual(['arm64']);
    }
  });

  it('has one on-demand table with generic keys, the two listing indexes (time keys only), the keys-only due and search indexes, expiring items by TTL', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      GlobalSecondaryIndexes: Object.values(INDEXES).map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection:
          index.name === 'emails-by-status'
            ? { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'created_at'] }
            : { ProjectionType: 'KEYS_ONLY' },
      })),
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  it('feeds the send queue (with a dead-letter queue) to the consumer with partial batch responses', () => {
    // Six times the consumer's 40 s: a 20 s fetch of a file, SES's 12 s and the writes around them.
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 240,
      MaximumMessageSize: 1048576,
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 5 },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    const mappings = Object.values(resources('AWS::Lambda::EventSourceMapping'));
    // The send queue, the SES events, the webhooks, the request-log writer's retry queue,
    // receiving's rule queue, the contact imports' and the audience clean-up's queues, the
    // broadcasts' fan-out queue and the broadcast lane.
    expect(mappings).toHaveLength(9);
    for (const mapping of mappings)
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    // The consumer knows the attempt after which its message goes to the DLQ.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 40,
      Environment: { Variables: Match.objectLike({ SEND_MAX_RECEIVE_COUNT: '5' }) },
    });
  });

  it('takes any send concurrency from 2 to 1,000, and a send rate of its own; refuses others naming the setting', () => {
    expect(() => synthStack({ sendConcurrency: 1 })).toThrow(
      /sendConcurrency must be a whole number from 2 to 1000/,
    );
    expect(() => synthStack({ sendConcurrency: 1001 })).toThrow(/sendConcurrency/);
    expect(() => synthStack({ sesMaxSendRate: 0 })).toThrow(/sesMaxSendRate must be/);
    const { template: paced } = synthStack({ sendConcurrency: 2, sesMaxSendRate: 1 });
    paced.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    paced.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SES_MAX_SEND_RATE: '1' }) },
    });
    // Without the setting, the rate is the account's, from GetAccount: no variable.
    for (const fn of Object.values(resources('AWS::Lambda::Function')))
      expect(JSON.stringify(fn.Properties.Environment ?? {})).not.toContain('SES_MAX_SEND_RATE');
  });

  it("takes send batches of 1 to 100, with a 1 s batching window above SQS's 10 without one", () => {
    for (const bad of [0, 101, 10.5])
      expect(() => synthStack({ sendBatchSize: bad })).toThrow(
        /sendBatchSize must be a whole number from 1 to 100/,
      );
    const window = (sendBatchSize: number) => {
      const { stack: s, template: t } = synthStack({ sendBatchSize });
      const mapping = Object.values(resourcesOf(t, 'AWS::Lambda::EventSourceMapping')).find((m) =>
        JSON.stringify(m.Properties.EventSourceArn).includes(logicalId(s, s.send.queue)),
      );
      return [mapping?.Properties.BatchSize, mapping?.Properties.MaximumBatchingWindowInSeconds];
    };
    expect(window(10)).toEqual([10, undefined]);
    expect(window(20)).toEqual([20, 1]);
  });

  it('caps the SES events consumer at sesEventsConcurrency (2 to 1,000); refuses others naming the setting', () => {
    for (const bad of [1, 1001, 2.5])
      expect(() => synthStack({ sesEventsConcurrency: bad })).toThrow(
        /sesEventsConcurrency must be a whole number from 2 to 1000/,
      );
    const { stack: raised, template: raisedTemplate } = synthStack({ sesEventsConcurrency: 50 });
    const mappings = Object.values(resourcesOf(raisedTemplate, 'AWS::Lambda::EventSourceMapping'));
    const concurrencyOf = (queue: Parameters<typeof logicalId>[1]) =>
      mappings.find((m) => JSON.stringify(m.Properties.EventSourceArn).includes(logicalId(raised, queue)))
        ?.Properties.ScalingConfig;
    expect(concurrencyOf(raised.sesEvents.queue)).toEqual({ MaximumConcurrency: 50 });
    // The other consumers keep their own settings.
    expect(concurrencyOf(raised.send.queue)).toEqual({ MaximumConcurrency: 5 });
    expect(concurrencyOf(raised.webhooks.queue)).toEqual({ MaximumConcurrency: 5 });
  });

  it('publishes SES events of its configuration set through SNS (raw) to the events queue', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: Match.objectLike({
        Enabled: true,
        MatchingEventTypes: [
          'send',
          'reject',
          'bounce',
          'complaint',
          'delivery',
          'deliveryDelay',
          'renderingFailure',
          // SES reports these only for emails sent with tracking on.
          'open',
          'click',
        ],
        SnsDestination: Match.anyValue(),
      }),
    });
    // With open and click, a destination turns tracking on for every email the set sends unless the
    // send turns it off: it is updated only after the sending code that does.
    const [destination] = Object.values(
      template.findResources('AWS::SES::ConfigurationSetEventDestination'),
    ) as { DependsOn?: string[] }[];
    // The consumer is in a nested stack: the destination waits for that whole stack's update.
    expect(destination?.DependsOn).toContain(deployedBy(stack.send.consumer.function));
    expect(deployedBy(stack.send.consumer.function)).not.toBe(logicalId(stack, stack.send.consumer.function));
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'sqs', RawMessageDelivery: true });
    // Its consumer takes the events in batches of up to 100 gathered over 2 s: fewer invocations,
    // receives and deletes per email, and an email's Send and Delivery events often in one batch.
    const mapping = Object.values(resources('AWS::Lambda::EventSourceMapping')).find((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(logicalId(stack, stack.sesEvents.queue)),
    );
    expect(mapping?.Properties).toMatchObject({
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 2,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    // SES's documented maximum delivery time, set so the sweeper's bound for final events is ours.
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      DeliveryOptions: Match.objectLike({ MaxDeliverySeconds: 50_400 }),
    });
  });

  it("tracks per send, not per set: the stack's set has no tracking options and its destination takes OPEN and CLICK; domains' sets get the same delivery time", () => {
    const [configurationSet] = Object.values(resources('AWS::SES::ConfigurationSet'));
    // SES's own tracking host for every domain without one of its own; each send says on or off.
    expect(configurationSet?.Properties.TrackingOptions).toBeUndefined();
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: Match.objectLike({ MatchingEventTypes: Match.arrayWith(['open', 'click']) }),
    });
    for (const name of ['create-domain', 'update-domain', 'check-domains']) {
      const fn = template.toJSON().Resources[logicalId(stack, stack.functions[name] as never)];
      expect(fn.Properties.Environment.Variables.SES_MAX_DELIVERY_SECONDS, name).toBe('50400');
      expect(fn.Properties.Environment.Variables.DOMAIN_CONFIGURATION_SET_PREFIX, name).toBe(
        domainConfigurationSetPrefix(stack.stackName),
      );
    }
    // Tracking subdomains only with an HTTPS front in front of SES's tracking host.
    const withFront = synthStack({ trackingHttpsTarget: 'd111111abcdef8.cloudfront.net' });
    const update =
      withFront.template.toJSON().Resources[
        logicalId(withFront.stack, withFront.stack.functions['update-domain'] as never)
      ];
    expect(update.Properties.Environment.Variables.TRACKING_HTTPS_TARGET).toBe(
      'd111111abcdef8.cloudfront.net',
    );
    const without = template.toJSON().Resources[logicalId(stack, stack.functions['update-domain'] as never)];
    expect(without.Properties.Environment.Variables.TRACKING_HTTPS_TARGET).toBeUndefined();
  });

  it('keeps the timings the promise rests on, read from the synthesized template', () => {
    const env = (name: string) => {
      const fn = template.toJSON().Resources[logicalId(stack, stack.functions[name] as never)];
      return {
        timeout: Number(fn.Properties.Timeout),
        vars: fn.Properties.Environment.Variables as Record<string, string>,
      };
    };
    const queue = (construct: { node: { defaultChild?: unknown } }) =>
      template.toJSON().Resources[logicalId(stack, construct)].Properties as {
        VisibilityTimeout: number;
        RedrivePolicy: { maxReceiveCount: number };
      };
    const consumer = env('process-send-queue');
    const sweeper = env('sweep-emails');
    const send = queue(stack.send.queue);
    const events = queue(stack.sesEvents.queue);
    const [configurationSet] = Object.values(resources('AWS::SES::ConfigurationSet'));
    if (!configurationSet) throw new Error('no configuration set');
    const maxDelivery = (configurationSet.Properties.DeliveryOptions as { MaxDeliverySeconds: number })
      .MaxDeliverySeconds;
    const ms = (s: number) => s * 1000;
    // A hung SendEmail ends before the consumer is stopped, so its outcome is recorded.
    expect(
      Number(consumer.vars.SES_CONNECT_TIMEOUT_MS) + Number(consumer.vars.SES_REQUEST_TIMEOUT_MS),
    ).toBeLessThan(ms(consumer.timeout));
    // A message does not reappear while the invocation that received it still runs.
    expect(send.VisibilityTimeout).toBeGreaterThanOrEqual(6 * consumer.timeout);
    // A request holding an idempotency key is stopped before its lease ends, so a retry that
    // resumes it never races its writes (send-batch writes fresh status items unconditionally).
    for (const name of ['send-email', 'send-batch'])
      expect(ms(env(name).timeout), name).toBeLessThan(IDEMPOTENCY_LEASE_MS);
    expect(send.RedrivePolicy.maxReceiveCount).toBe(Number(consumer.vars.SEND_MAX_RECEIVE_COUNT));
    // An unsent email is re-queued only once its own message can no longer be retried.
    expect(Number(sweeper.vars.SWEEP_REQUEUE_AFTER_MS)).toBeGreaterThanOrEqual(
      send.RedrivePolicy.maxReceiveCount * ms(send.VisibilityTimeout),
    );
    // An unknown outcome is settled only after every retry of its Send event.
    expect(Number(sweeper.vars.SWEEP_UNKNOWN_OUTCOME_AFTER_MS)).toBeGreaterThan(
      events.RedrivePolicy.maxReceiveCount * ms(events.VisibilityTimeout),
    );
    // A sent email is settled without a final event only after SES stopped trying to deliver it.
    expect(Number(sweeper.vars.SWEEP_FINAL_EVENTS_AFTER_MS)).toBeGreaterThan(ms(maxDelivery));
    // The sweeper runs every minute.
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: Match.arrayWith([
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(stack, stack.functions['sweep-emails'] as never), 'Arn'] },
        }),
      ]),
    });
  });

  it('names each invariant a change of timings would break', () => {
    expect(() => synthStack({ sendMaxAttempts: 5 }, 'Fine')).not.toThrow();
    expect(
      timingProblems({
        ...stack.timings,
        requeueAfterMs: stack.timings.sendMaxAttempts * stack.timings.sendVisibilitySeconds * 1000 - 1,
      }),
    ).toHaveLength(1);
    expect(timingProblems({ ...stack.timings, sesRequestTimeoutMs: 30_000 })).toHaveLength(1);
    expect(timingProblems({ ...stack.timings, unknownOutcomeAfterMs: 1 })).toHaveLength(1);
    expect(timingProblems({ ...stack.timings, finalEventsAfterMs: 1 })).toHaveLength(1);
    expect(timingProblems(stack.timings)).toEqual([]);
  });

  it('refuses plain-HTTP access to its queues and topic', () => {
    for (const type of ['AWS::SQS::QueuePolicy', 'AWS::SNS::TopicPolicy']) {
      const policies = Object.values(resources(type));
      expect(policies.length).toBeGreaterThan(0);
      for (const policy of policies) {
        expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
      }
    }
  });

  it('keeps attachments and large bodies in a private, encrypted, TLS-only bucket that expires them and is kept', () => {
    const buckets = template.findResources('AWS::S3::Bucket');
    expect(Object.keys(buckets)).toHaveLength(1);
    // biome-ignore lint/suspicious/noExplicitAny: the template's JSON, read as such
    const bucket = Object.values(buckets)[0] as any;
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
      { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
    ]);
    // A rule a prefix: sent content 31 days, received mail 30 (test/infra/receiving.test.ts).
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      { Id: 'expire-content-attachments', Prefix: 'attachments/', ExpirationInDays: 31, Status: 'Enabled' },
      { Id: 'expire-content-bodies', Prefix: 'bodies/', ExpirationInDays: 31, Status: 'Enabled' },
      { Id: 'expire-received', Prefix: 'received/', ExpirationInDays: 30, Status: 'Enabled' },
      { Id: 'expire-imports', Prefix: 'imports/', ExpirationInDays: 7, Status: 'Enabled' },
      {
        Id: 'abort-incomplete-uploads',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      },
    ]);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const longer = Template.fromStack(new EmailServiceStack(app, 'Longer', { contentRetentionDays: 90 }));
    longer.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'attachments/', ExpirationInDays: 90 })]),
      },
    });
    // Shorter than an email may wait for its time (30 days) and a day: its attachments would be gone.
    expect(() => new EmailServiceStack(app, 'Shorter', { contentRetentionDays: 30 })).toThrow(
      /contentRetentionDays must be a whole number of days ≥ 31, as an email may be scheduled 30 days ahead/,
    );
  });

  it('grants S3 actions only to the functions that use the content, each on its prefix only', () => {
    const bucket = logicalId(stack, stack.content.bucket);
    const on = (prefix: string) =>
      JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${prefix}*`]] });
    const expected: Record<string, Record<string, string[]>> = {
      'send-email': { 'attachments/': ['s3:PutObject'], 'bodies/': ['s3:PutObject'] },
      'get-email': { 'bodies/': ['s3:GetObject'] },
      // A shared email's page reads its bodies as get-email does.
      'get-shared-email': { 'bodies/': ['s3:GetObject'] },
      'list-attachments': { 'attachments/': ['s3:GetObject'] },
      'get-attachment': { 'attachments/': ['s3:GetObject'] },
      'process-send-queue': {
        'attachments/': ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'],
        'bodies/': ['s3:GetObject'],
      },
      // The broadcast lane's consumer: the send consumer's code.
      'process-broadcast-queue': {
        'attachments/': ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'],
        'bodies/': ['s3:GetObject'],
      },
      // Receiving (test/infra/receiving.test.ts): received mail, and the sweep's listing of received/raw/.
      'receive-email': { 'received/': ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'] },
      'sweep-received': {
        'received/': ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'],
        [JSON.stringify({ 'Fn::GetAtt': [bucket, 'Arn'] })]: ['s3:ListBucket'],
      },
    };
    for (const name of Object.keys(stack.functions)) {
      // The audience's functions: the imports/ prefix in test/infra/audience.test.ts, every call in grants.test.ts.
      if (AUDIENCE.includes(conceptOf(name))) continue;
      const granted: Record<string, string[]> = {};
      for (const st of policiesOf(name).filter((st) => JSON.stringify(st.Action).includes('s3:'))) {
        // Anything on another resource (the bucket itself, *) shows up under its own name and fails.
        const prefix =
          ['attachments/', 'bodies/', 'received/'].find((p) => JSON.stringify(st.Resource) === on(p)) ??
          JSON.stringify(st.Resource);
        granted[prefix] = [...(granted[prefix] ?? []), ...[st.Action].flat()].sort();
      }
      // The receiving API's routes read received mail's objects (and sign its links), nothing more.
      const reads = conceptOf(name) === 'receiving' && !(name in expected);
      expect(granted, name).toEqual(
        reads && granted['received/'] ? { 'received/': ['s3:GetObject'] } : (expected[name] ?? {}),
      );
    }
  });

  it('grants SQS actions only to the functions that use each queue (DynamoDB and SES: see grants.test.ts)', () => {
    // Lambda's event source polls with the consumer's role; these are the actions it needs.
    const consume = [
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ];
    const expected: Record<string, string[]> = {
      // Exactly the actions of its catalog entry: no GetQueueUrl, GetQueueAttributes it never calls.
      'send-email': ['sqs:SendMessage'],
      'send-batch': ['sqs:SendMessage'],
      // Both consumers also raise webhook events (SendMessage to the delivery queue).
      // …and puts a scheduled email's early message back on the send queue, delayed.
      'process-send-queue': [...consume, 'sqs:SendMessage'].sort(),
      // The same on the broadcast lane (what it defers goes back there).
      'process-broadcast-queue': [...consume, 'sqs:SendMessage'].sort(),
      // A rescheduled email due within the scheduler's look-ahead is queued at once.
      'update-email': ['sqs:SendMessage'],
      'process-ses-events': [...consume, 'sqs:SendMessage'].sort(),
      // Its retries are new delayed messages.
      'deliver-webhooks': [...consume, 'sqs:SendMessage'].sort(),
      'create-domain': ['sqs:SendMessage'],
      'get-domain': ['sqs:SendMessage'],
      'verify-domain': ['sqs:SendMessage'],
      'update-domain': ['sqs:SendMessage'],
      'delete-domain': ['sqs:SendMessage'],
      'check-domains': ['sqs:SendMessage'],
      'replay-webhook-event': ['sqs:SendMessage'],
      // Re-queues (SendMessage, and GetQueueAttributes for the backlog); reads the DLQ without deleting.
      'sweep-emails': ['sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:SendMessage'],
      // Queues scheduled emails (and reads the backlog before re-queueing a stranded one).
      'dispatch-scheduled': ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
      'requeue-webhook-retries': ['sqs:SendMessage'],
      // Its failure destination is the retry queue (SendMessage, by Lambda with its role), which it consumes.
      'write-request-logs': [...consume, 'sqs:SendMessage'].sort(),
      // Receiving: the webhook queue, and its failure destination (by Lambda, with its role).
      'receive-email': ['sqs:SendMessage'],
      // Reads and deletes the failure destination's records; raises events.
      'sweep-received': ['sqs:DeleteMessage', 'sqs:ReceiveMessage', 'sqs:SendMessage'],
      'sync-receipt-rules': consume,
      // An update queues a sync.
      'set-up-receiving': ['sqs:SendMessage'],
      // A broadcast's send queues its fan-out's first step (create-broadcast with send: true).
      'create-broadcast': ['sqs:SendMessage'],
      'send-broadcast': ['sqs:SendMessage'],
    };
    for (const name of Object.keys(stack.functions)) {
      // The audience's functions: their queues in test/infra/audience.test.ts, every call in grants.test.ts.
      if (AUDIENCE.includes(conceptOf(name))) continue;
      const sqs = actionsOf(name).filter((action) => action.startsWith('sqs:'));
      expect(sqs, name).toEqual(expected[name] ?? []);
    }
    const dlq = JSON.stringify(policiesOf('sweep-emails').filter((s) => s.Action === 'sqs:ReceiveMessage'));
    expect(dlq).toContain(logicalId(stack, stack.send.deadLetterQueue));
    // …and the broadcast lane's, and it re-queues stranded broadcast emails on the lane.
    expect(dlq).toContain(logicalId(stack, stack.send.laneDeadLetterQueue));
    expect(JSON.stringify(policiesOf('sweep-emails'))).toContain(logicalId(stack, stack.send.laneQueue));
    // Events go to the webhook delivery queue, and only there.
    const webhookQueue = logicalId(stack, stack.webhooks.queue);
    for (const name of ['create-domain', 'check-domains', 'process-send-queue', 'process-ses-events']) {
      const sends = policiesOf(name).filter((s) => s.Action === 'sqs:SendMessage');
      expect(JSON.stringify(sends), name).toContain(webhookQueue);
      // The send consumer puts a scheduled email's early message back on its own queue too.
      if (name === 'process-send-queue') expect(sends).toHaveLength(2);
      else expect(JSON.stringify(sends), name).not.toContain(logicalId(stack, stack.send.queue));
    }
  });

  it('delivers webhooks from their own queue: retries SQS can hold, a dead-letter queue, bounded concurrency', () => {
    const queue = resources('AWS::SQS::Queue')[logicalId(stack, stack.webhooks.queue)];
    expect(queue?.Properties).toMatchObject({
      // Six times the function's timeout (40 s: three rounds of 10 s attempts to one endpoint, 4 at
      // a time, and their records).
      VisibilityTimeout: 240,
      // The schedule's 8 attempts span about 28 hours.
      MessageRetentionPeriod: 4 * 86_400,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, stack.webhooks.deadLetterQueue), 'Arn'] },
        maxReceiveCount: 10,
      },
      SqsManagedSseEnabled: true,
    });
    const fn = resources('AWS::Lambda::Function')[logicalId(stack, stack.webhooks.delivery.function)];
    expect(fn?.Properties.Timeout).toBe(40);
    // Never allowed plain http or loopback on AWS.
    expect(JSON.stringify(fn?.Properties.Environment)).not.toContain('WEBHOOK_ALLOW_LOOPBACK');
    const mapping = Object.values(resources('AWS::Lambda::EventSourceMapping')).find((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(logicalId(stack, stack.webhooks.queue)),
    );
    expect(mapping?.Properties).toMatchObject({
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionName: { Ref: logicalId(stack, stack.webhooks.delivery.function) },
    });
  });

  it('reaches the listing indexes by name only from the lists (and the sweeper its queued emails, the scheduler the due index; a suppression by id), and uses no managed policy', () => {
    const policyText = (name: string) => JSON.stringify(policiesOf(name));
    for (const name of Object.keys(stack.functions)) {
      expect(policyText(name), name).not.toContain('/index/*');
      // The audience's listings use the time and status indexes by name (grants.test.ts holds each call).
      if (AUDIENCE.includes(conceptOf(name))) continue;
      if (name === 'list-emails' || name === 'list-suppressions' || name === 'list-logs') {
        // (list-logs: its logs from the table's own partitions; an error class, and the logs of
        // the previous layout, from the indexes.)
        for (const index of [INDEXES.emailsByTime, INDEXES.emailsByStatus])
          expect(policyText(name)).toContain(`/index/${index.name}`);
        expect(policyText(name)).not.toContain(`/index/${INDEXES.emailsByDue.name}`);
        // The search index: the email list's alone.
        expect(policyText(name).includes(`/index/${INDEXES.emailsBySearch.name}"`), name).toBe(
          name === 'list-emails',
        );
      } else if (['get-suppression', 'delete-suppression', 'batch-remove-suppressions'].includes(name)) {
        expect(policyText(name), name).toContain(`/index/${INDEXES.emailsByTime.name}`);
        expect(policyText(name), name).not.toContain(`/index/${INDEXES.emailsByStatus.name}`);
      } else if (name === 'sweep-emails') {
        expect(policyText(name)).toContain(`/index/${INDEXES.emailsByStatus.name}`);
        expect(policyText(name)).not.toContain(`/index/${INDEXES.emailsByDue.name}`);
        expect(policyText(name)).not.toContain(`/index/${INDEXES.emailsByTime.name}`);
      } else if (name === 'dispatch-scheduled') {
        expect(policyText(name)).toContain(`/index/${INDEXES.emailsByDue.name}`);
        expect(policyText(name)).not.toContain(`/index/${INDEXES.emailsByStatus.name}`);
        expect(policyText(name)).not.toContain(`/index/${INDEXES.emailsByTime.name}`);
      } else {
        expect(policyText(name), name).not.toContain('/index/');
      }
    }
    for (const role of Object.values(resources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('grants on * (IAM has no resource for them) only ses:DeleteSuppressedDestination to the functions that take addresses off the list, ses:GetAccount (read only) to the send consumer, and receipt-rule actions to the rule writer and its custom resource', () => {
    for (const name of Object.keys(stack.functions)) {
      const onAnything = policiesOf(name)
        .filter((st) => [st.Resource].flat().includes('*'))
        .flatMap((st) => [st.Action].flat());
      if (name === 'delete-suppression' || name === 'batch-remove-suppressions')
        expect(onAnything, name).toEqual(['ses:DeleteSuppressedDestination']);
      else if (name === 'process-send-queue' || name === 'process-broadcast-queue')
        expect(onAnything, name).toEqual(['ses:GetAccount']);
      // SES's receipt-rule actions (test/infra/receiving.test.ts holds each list).
      else if (name === 'sync-receipt-rules' || name === 'set-up-receiving')
        expect(
          onAnything.every((action) => /^ses:\w+ReceiptRule/.test(action)),
          name,
        ).toBe(true);
      else expect(onAnything, name).toEqual([]);
    }
  });

  it('lets each function write to its own log group only', () => {
    for (const [name, fn] of Object.entries(stack.functions)) {
      const logGroupId = logicalId(stack, fn.logGroup as never);
      const statements = policiesOf(name).filter((st) => JSON.stringify(st.Action).includes('logs:'));
      expect(statements, name).toHaveLength(1);
      expect(JSON.stringify(statements[0]?.Resource)).toContain(logGroupId);
    }
  });

  it('keeps an access log of the API, without headers', () => {
    const stage = Object.values(resources('AWS::ApiGatewayV2::Stage'))[0];
    const settings = stage?.Properties.AccessLogSettings as { Format: string; DestinationArn: unknown };
    expect(settings.DestinationArn).toBeDefined();
    expect(JSON.parse(settings.Format)).toHaveProperty('requestId', '$context.requestId');
    expect(settings.Format).not.toMatch(/header|authorization/i);
  });

  it('scopes ses:SendEmail and ses:SendRawEmail (an SMTP email, sent as raw content) to identities and its own configuration set', () => {
    const ses = policiesOf('process-send-queue').filter((s) => JSON.stringify(s.Action).includes('ses:Send'));
    expect(ses).toHaveLength(1);
    expect(ses[0]?.Action).toEqual(['ses:SendEmail', 'ses:SendRawEmail']);
    // The broadcast lane never carries an SMTP email: ses:SendEmail alone.
    const lane = policiesOf('process-broadcast-queue').filter((s) =>
      JSON.stringify(s.Action).includes('ses:Send'),
    );
    expect(lane.map((s) => s.Action)).toEqual(['ses:SendEmail']);
    const resourcesText = JSON.stringify(ses[0]?.Resource);
    expect(resourcesText).toContain(':identity/*');
    expect(resourcesText).toContain(':configuration-set/');
    expect(resourcesText).toContain(logicalId(stack, stack.sesEvents.configurationSet as never));
    expect(resourcesText).not.toMatch(/"\*"/);
  });

  it("gives the domain functions SES identity actions on this account's identities, and configuration-set actions on the stack's prefix only", () => {
    const domainSets = `configuration-set/${domainConfigurationSetPrefix(stack.stackName)}dom_*`;
    for (const name of [
      'create-domain',
      'get-domain',
      'verify-domain',
      'update-domain',
      'delete-domain',
      'check-domains',
    ]) {
      const ses = policiesOf(name).filter((s) => JSON.stringify(s.Action).includes('ses:'));
      const identities = ses.filter((s) => JSON.stringify(s.Action).includes('EmailIdentity'));
      const sets = ses.filter((s) => !identities.includes(s));
      expect(identities.length, name).toBeLessThanOrEqual(1);
      for (const action of [identities[0]?.Action ?? []].flat())
        expect(String(action)).toMatch(/^ses:(\w*EmailIdentity\w*|TagResource)$/);
      if (identities[0])
        expect(JSON.stringify(identities[0].Resource)).toMatch(/:ses:us-east-1:123456789012:identity\/\*/);
      // delete-domain only retires its domain's set (the check deletes it later).
      expect(sets, name).toHaveLength(name === 'delete-domain' ? 0 : 1);
      if (!sets[0]) continue;
      for (const action of [sets[0]?.Action].flat())
        expect(String(action)).toMatch(/^ses:(\w*ConfigurationSet\w*|TagResource)$/);
      expect(JSON.stringify(sets[0]?.Resource)).toContain(`:ses:us-east-1:123456789012:${domainSets}`);
    }
    // The send consumer sends with the stack's set or a domain's own; no other function sends.
    const send = policiesOf('process-send-queue').find((s) => [s.Action].flat().includes('ses:SendEmail'));
    expect(JSON.stringify(send?.Resource)).toContain(domainSets);
  });

  it("lets SES publish the events of domains' own configuration sets to the events topic, from this account only", () => {
    const topic = logicalId(stack, stack.sesEvents.topic as never);
    const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy')).filter((p) =>
      JSON.stringify(p.Properties.Topics).includes(topic),
    );
    const statements = policies.flatMap(
      (p) =>
        p.Properties.PolicyDocument.Statement as { Condition?: Record<string, Record<string, unknown>> }[],
    );
    const domains = statements.find((s) => s.Condition?.ArnLike);
    expect(domains?.Condition?.StringEquals?.['AWS:SourceAccount']).toBe('123456789012');
    expect(JSON.stringify(domains?.Condition?.ArnLike?.['AWS:SourceArn'])).toContain(
      `configuration-set/${domainConfigurationSetPrefix(stack.stackName)}dom_*`,
    );
  });

  it("gives a domain's own configuration set the stack set's event types (the same consumer reads both)", () => {
    const destination = Object.values(
      template.findResources('AWS::SES::ConfigurationSetEventDestination'),
    )[0];
    const types = ((destination?.Properties.EventDestination.MatchingEventTypes ?? []) as string[]).map((t) =>
      t.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase(),
    );
    expect([...types].sort()).toEqual([...PUBLISHED_EVENT_TYPES].sort());
  });

  it('re-checks pending domains on a schedule (every minute by default)', () => {
    const checker = logicalId(stack, stack.functions['check-domains'] as never);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: Match.arrayWith([Match.objectLike({ Arn: { 'Fn::GetAtt': [checker, 'Arn'] } })]),
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [checker, 'Arn'] },
    });
  });

  it('stores new bodies deflated unless deflateBodies is off (while a rollback must stay possible)', () => {
    const bodies = (t: Template) =>
      ['send-email', 'send-batch'].map(
        (name) =>
          Object.values(t.findResources('AWS::Lambda::Function')).find(
            (fn) =>
              fn.Properties.Description ===
              (name === 'send-email' ? 'POST /v1/emails' : 'POST /v1/emails/batch'),
          )?.Properties.Environment.Variables.DEFLATE_BODIES,
      );
    expect(bodies(template)).toEqual(['true', 'true']);
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const off = templateOf(new EmailServiceStack(app, 'Plain', { deflateBodies: false }));
    expect(bodies(off)).toEqual(['false', 'false']);
  });

  it('limits each key to 10 requests per second by default (counted on the key item; idempotency keys expire by TTL)', () => {
    const apiFunctions = [...API_ROUTES.map((r) => r.handler), 'route-not-found'];
    for (const name of apiFunctions) {
      const id = logicalId(stack, stack.functions[name] as never);
      const fn = template.toJSON().Resources[id];
      expect(fn.Properties.Environment.Variables.RATE_LIMIT_PER_SECOND, name).toBe('10');
    }
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const custom = templateOf(new EmailServiceStack(app, 'Custom', { keyRateLimit: 25 }));
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ RATE_LIMIT_PER_SECOND: '25' }) },
    });
  });

  it("subscribes the request-log writer to every API function's log group (its marked lines only), invokable by CloudWatch Logs from this account", () => {
    const filters = Object.values(resources('AWS::Logs::SubscriptionFilter'));
    const apiFunctions = [...stack.api.functions.values()];
    expect(filters).toHaveLength(apiFunctions.length);
    const writer = stack.requestLogs?.writer.function;
    if (!writer) throw new Error('request logs are on by default');
    const writerArn = { 'Fn::GetAtt': [logicalId(stack, writer), 'Arn'] };
    for (const fn of apiFunctions)
      template.hasResourceProperties('AWS::Logs::SubscriptionFilter', {
        LogGroupName: { Ref: logicalId(stack, fn.logGroup) },
        DestinationArn: writerArn,
        FilterPattern: REQUEST_LOG_FILTER,
      });
    expect(REQUEST_LOG_FILTER).toBe('{ $.log_type = "api_request" }');
    const permissions = Object.entries(resources('AWS::Lambda::Permission')).filter(
      ([, p]) => p.Properties.Principal === 'logs.amazonaws.com',
    );
    expect(permissions).toHaveLength(1);
    const [permissionId, permission] = permissions[0] as [string, { Properties: Record<string, unknown> }];
    expect(permission.Properties).toMatchObject({
      Action: 'lambda:InvokeFunction',
      FunctionName: writerArn,
      SourceAccount: stack.account,
    });
    expect(JSON.stringify(permission.Properties.SourceArn)).toContain(':log-group:*');
    // Each filter is created after the permission (CloudWatch checks it can invoke the writer): in
    // the permission's template, it depends on it; in another, its stack depends on the permission's.
    const permissionElement = writer.node.findChild('FromApiLogGroups') as CfnElement;
    expect(permissionElement.stack.resolve(permissionElement.logicalId)).toBe(permissionId);
    const parentResources = templates.get(stack.node.path)?.toJSON().Resources;
    expect(stack.requestLogs?.filters).toHaveLength(filters.length);
    for (const filter of stack.requestLogs?.filters ?? []) {
      const element = filter.node.defaultChild as CfnElement;
      const dependsOn =
        element.stack === permissionElement.stack
          ? (resources('AWS::Logs::SubscriptionFilter')[logicalId(stack, filter)] as { DependsOn?: string[] })
              .DependsOn
          : parentResources[deployedBy(filter)].DependsOn;
      expect(dependsOn, filter.node.path).toContain(
        element.stack === permissionElement.stack
          ? permissionId
          : deployedBy({ node: { defaultChild: permissionElement } }),
      );
    }
    // The writer: BatchWriteItem on the table, the retention as its setting (30 days by default),
    // and its retry queue (test/infra/request-logs.test.ts).
    expect(actionsOf('write-request-logs').filter((action) => !action.startsWith('sqs:'))).toEqual([
      'dynamodb:BatchWriteItem',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('request logs'),
      Environment: { Variables: Match.objectLike({ LOG_RETENTION_DAYS: '30' }) },
    });
  });

  it('keeps request logs logRetentionDays (1 to 3,650; within emailRetentionDays: test/infra/request-logs.test.ts); refuses others naming the setting', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const custom = new EmailServiceStack(app, 'Logs90', { logRetentionDays: 90, emailRetentionDays: 90 });
    templateOf(custom).hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ LOG_RETENTION_DAYS: '90' }) },
    });
    for (const bad of [0, 1.5, 4000])
      expect(
        () =>
          new EmailServiceStack(new App(), `Bad${String(bad).replace('.', '')}`, { logRetentionDays: bad }),
      ).toThrow(/logRetentionDays/);
  });

  it('outputs the API base URL with /v1 and the table name for the first-key script', () => {
    template.hasOutput('ApiUrl', { Value: { 'Fn::Join': ['', Match.arrayWith(['/v1'])] } });
    template.hasOutput('TableName', Match.anyValue());
  });
});
