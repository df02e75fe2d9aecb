/**
 * Receiving's infrastructure (lib/constructs/receiving.ts): made only where SES receives, with SES
 * allowed to write `received/raw/` and to invoke receive-email for our rules of this account only,
 * the failure destination and its sweep, the rule writer's FIFO queue, the custom resource, the
 * content bucket's lifecycle by prefix, and each receiving grant exactly.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { missingObjectStatus } from '../../functions/catalog.js';
import { RULES_RESYNC_MS } from '../../functions/domains/check.js';
import { RECEIVING_REGIONS } from '../../functions/domains/receiving-regions.js';
import { UPDATE_RESERVE_MS } from '../../functions/receiving/set-up.js';
import { buildApp } from '../../lib/app.js';
import { conceptOf } from '../../lib/concepts.js';
import { ContentBucket } from '../../lib/constructs/content-bucket.js';
import { receivingIn, receivingNames } from '../../lib/constructs/receiving.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { allows } from '../support/iam.js';
import {
  deployedBy,
  logicalId,
  policiesOf,
  type Resource,
  resourcesOf,
  type Statement,
  templateOf,
} from '../support/template.js';

const ACCOUNT = '123456789012';
let stack: EmailServiceStack;
let template: Template;
const resources = (type: string) => resourcesOf(template, type);
const idOf = (construct: { node: { defaultChild?: unknown } }) => logicalId(stack, construct);
const fnId = (name: string) => idOf(stack.functions[name] as never);

/** Our rules' ARN, whatever set they sit in (SES's documented form, the set left open). */
const ruleArns = (region: string, prefix: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      `:ses:${region}:${ACCOUNT}:receipt-rule-set/*:receipt-rule/${prefix}-receive-*`,
    ],
  ],
});

beforeAll(() => {
  // Through the app's settings, as `cdk deploy -c …` gives them.
  const app = new App({
    context: {
      'aws:cdk:bundling-stacks': [],
      receivedRetentionDays: '7',
      contentRetentionDays: '45',
      receivedVirusDownloads: 'true',
    },
  });
  stack = buildApp(app, { account: ACCOUNT, region: 'eu-west-1' }).service;
  template = templateOf(stack);
});

describe('where receiving is made', () => {
  it('only in the Regions where SES receives; elsewhere, and where the Region is unknown, the synth says receiving is off', () => {
    const infoOf = (s: Stack) =>
      s.node.metadata.filter((m) => m.type === 'aws:cdk:info').map((m) => String(m.data));
    for (const region of RECEIVING_REGIONS) {
      const s = new Stack(new App(), 'S', { env: { account: ACCOUNT, region } });
      expect(receivingIn(s), region).toBe(true);
      expect(infoOf(s), region).toEqual([]);
    }
    for (const region of ['eu-south-1', 'sa-east-1', 'ap-south-1', 'us-west-1']) {
      const s = new Stack(new App(), 'S', { env: { account: ACCOUNT, region } });
      expect(receivingIn(s), region).toBe(false);
      expect(infoOf(s).join(), region).toMatch(
        new RegExp(`Receiving is off: SES does not receive mail in ${region}\\. SES receives in us-east-1, `),
      );
    }
    const agnostic = new Stack(new App(), 'S');
    expect(receivingIn(agnostic)).toBe(false);
    expect(infoOf(agnostic).join()).toMatch(
      /Receiving is off: the stack's Region is not known at synth time/,
    );
  });

  it('synthesizes no receiving resource, function, grant or setting in a Region where SES does not receive', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const elsewhere = buildApp(app, { account: ACCOUNT, region: 'eu-south-1' }).service;
    expect(elsewhere.receiving).toBeUndefined();
    const other = templateOf(elsewhere);
    const json = JSON.stringify(other.toJSON());
    // SES may neither write to the bucket nor invoke a function there.
    for (const type of ['AWS::S3::BucketPolicy', 'AWS::Lambda::Permission'])
      expect(JSON.stringify(other.findResources(type)), type).not.toContain('ses.amazonaws.com');
    for (const absent of [
      'Custom::ReceiptRules',
      'receipt-rule',
      'ReceiptRule',
      'RECEIPT_RULES_QUEUE_URL',
      'RECEIVE_FUNCTION_ARN',
      'FifoQueue',
      's3:ListBucket',
    ])
      expect(json, absent).not.toContain(absent);
    for (const name of ['receive-email', 'sweep-received', 'sync-receipt-rules', 'set-up-receiving'])
      expect(elsewhere.functions[name], name).toBeUndefined();
    // The domain functions are there, without the queue they would ask for a sync on.
    expect(elsewhere.functions['create-domain']).toBeDefined();
  });
});

describe('SES receiving', () => {
  it('lets ses.amazonaws.com write only received/raw/*, for this account and our rules, in whatever set they sit', () => {
    const { rulePrefix } = receivingNames(stack.stackName);
    const bucketId = idOf(stack.content.bucket);
    const statements = Object.values(resources('AWS::S3::BucketPolicy')).flatMap(
      (p) =>
        (p.Properties.PolicyDocument as { Statement: (Statement & Record<string, unknown>)[] }).Statement,
    );
    const ses = statements.filter((s) => JSON.stringify(s.Principal ?? '').includes('ses.amazonaws.com'));
    expect(ses).toEqual([
      {
        Sid: 'SesWritesReceivedMail',
        Effect: 'Allow',
        Principal: { Service: 'ses.amazonaws.com' },
        Action: 's3:PutObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/received/raw/*']] },
        Condition: {
          StringEquals: { 'aws:SourceAccount': ACCOUNT },
          ArnLike: { 'aws:SourceArn': ruleArns('eu-west-1', rulePrefix) },
        },
      },
    ]);
    // Any other Allow in the bucket's policy names no principal outside the account.
    for (const s of statements.filter((s) => s !== ses[0])) expect(s.Effect).toBe('Deny');
  });

  it('lets SES invoke receive-email for our rules of this account only, asynchronously retried twice, then recorded in its failure destination', () => {
    const { rulePrefix } = receivingNames(stack.stackName);
    const permissions = Object.values(resources('AWS::Lambda::Permission')).filter(
      (p) => p.Properties.Principal === 'ses.amazonaws.com',
    );
    expect(permissions.map((p) => p.Properties)).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [fnId('receive-email'), 'Arn'] },
        Principal: 'ses.amazonaws.com',
        SourceAccount: ACCOUNT,
        SourceArn: ruleArns('eu-west-1', rulePrefix),
      },
    ]);
    const configs = Object.values(resources('AWS::Lambda::EventInvokeConfig')).filter(
      (c) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: fnId('receive-email') }),
    );
    expect(configs.map((c) => c.Properties)).toEqual([
      {
        FunctionName: { Ref: fnId('receive-email') },
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 2,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [idOf(stack.receiving?.failures as never), 'Arn'] } },
        },
      },
    ]);
    // Room for a 40 MB message: its bytes, their decoding and the attachments written back.
    const fn = resources('AWS::Lambda::Function')[fnId('receive-email')] as Resource;
    expect(fn.Properties.MemorySize).toBeGreaterThanOrEqual(1024);
    expect(fn.Properties.Timeout).toBe(120);
    // What failed for good is alarmed on when the sweep has not taken it within 15 minutes.
    const failures = idOf(stack.receiving?.failures as never);
    const alarm = Object.values(resources('AWS::CloudWatch::Alarm')).find((a) =>
      JSON.stringify(a.Properties.Metrics ?? '').includes(failures),
    );
    expect(alarm?.Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 3 });
  });

  it('sets the first rule up through a custom resource whose handler is set-up-receiving, made after SES may write and invoke', () => {
    const names = receivingNames(stack.stackName);
    const rules = Object.entries(resources('Custom::ReceiptRules'));
    expect(rules).toHaveLength(1);
    const [id, rule] = rules[0] as [string, Resource & { DependsOn?: string[] }];
    expect(rule.Properties).toEqual({
      ServiceToken: { 'Fn::GetAtt': [fnId('set-up-receiving'), 'Arn'] },
      RuleSetName: names.ruleSet,
      RulePrefix: names.rulePrefix,
      BucketName: { Ref: idOf(stack.content.bucket) },
      ObjectKeyPrefix: 'received/raw/',
      FunctionArn: { 'Fn::GetAtt': [fnId('receive-email'), 'Arn'] },
      SyncQueueUrl: { Ref: idOf(stack.receiving?.ruleQueue as never) },
    });
    expect(names.ruleSet).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}[A-Za-z0-9]$/);
    // SES checks both when the rule is made: the function's permission in its stack, and the
    // bucket's policy (in the parent) before the receiving stack is deployed at all.
    const permission = Object.entries(resources('AWS::Lambda::Permission')).find(
      ([, p]) => p.Properties.Principal === 'ses.amazonaws.com',
    )?.[0];
    expect(rule.DependsOn).toEqual(expect.arrayContaining([permission]));
    const nested = Template.fromStack(stack).toJSON().Resources[deployedBy(stack.receiving?.rules as never)];
    const policyId = Object.keys(resources('AWS::S3::BucketPolicy'))[0];
    expect(nested.DependsOn).toEqual(expect.arrayContaining([policyId]));
    // Time for an Update to rewrite SES's 200 rules a set, one a second, beside its reserve.
    const setUp = resources('AWS::Lambda::Function')[fnId('set-up-receiving')] as Resource;
    expect((setUp.Properties.Timeout as number) * 1_000).toBeGreaterThanOrEqual(UPDATE_RESERVE_MS + 200_000);
    // The writer's rules go in the set the custom resource put ours in.
    const writer = resources('AWS::Lambda::Function')[fnId('sync-receipt-rules')] as Resource;
    expect((writer.Properties.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject(
      {
        RECEIPT_RULE_SET: { 'Fn::GetAtt': [id, 'RuleSet'] },
        RECEIPT_RULE_PREFIX: names.rulePrefix,
        RECEIVE_FUNCTION_ARN: { 'Fn::GetAtt': [fnId('receive-email'), 'Arn'] },
        CONTENT_BUCKET: { Ref: idOf(stack.content.bucket) },
      },
    );
  });

  it('feeds the one rule writer from a FIFO queue, a message at a time, with a dead-letter queue', () => {
    const queue = resources('AWS::SQS::Queue')[idOf(stack.receiving?.ruleQueue as never)] as Resource;
    const dlq = idOf(stack.receiving?.ruleDeadLetterQueue as never);
    expect(queue.Properties).toMatchObject({
      FifoQueue: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 },
    });
    expect((resources('AWS::SQS::Queue')[dlq] as Resource).Properties.FifoQueue).toBe(true);
    const mappings = Object.values(resources('AWS::Lambda::EventSourceMapping')).filter(
      (m) =>
        JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: fnId('sync-receipt-rules') }),
    );
    expect(mappings.map((m) => m.Properties)).toEqual([
      expect.objectContaining({
        BatchSize: 1,
        EventSourceArn: { 'Fn::GetAtt': [idOf(stack.receiving?.ruleQueue as never), 'Arn'] },
      }),
    ]);
    // Six times the writer's timeout, as Lambda advises for a queue a function consumes.
    const writer = resources('AWS::Lambda::Function')[fnId('sync-receipt-rules')] as Resource;
    expect(queue.Properties.VisibilityTimeout).toBe(6 * (writer.Properties.Timeout as number));
  });

  it('sweeps every 5 minutes, within its own timeout', () => {
    const rules = Object.values(resources('AWS::Events::Rule')).filter((r) =>
      JSON.stringify(r.Properties.Targets).includes(`"${fnId('sweep-received')}"`),
    );
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toEqual(['rate(5 minutes)']);
    const fn = resources('AWS::Lambda::Function')[fnId('sweep-received')] as Resource;
    expect(fn.Properties.Timeout).toBeLessThan(300);
  });

  it("says when the rule writer's next sync comes after its dead letters: the domain check's, about every 2 minutes", () => {
    const [alarm] = Object.values(resources('AWS::CloudWatch::Alarm')).filter((a) =>
      JSON.stringify(a.Properties).includes(`"${idOf(stack.receiving?.ruleDeadLetterQueue as never)}"`),
    );
    const description = String(alarm?.Properties.AlarmDescription);
    // The check runs every minute and asks once the writer's last run is RULES_RESYNC_MS old.
    expect(RULES_RESYNC_MS).toBe(60_000);
    expect(description).toContain('about every 2 minutes');
    expect(description).not.toMatch(/hourly/);
  });

  it('alarms when the active rule set no longer holds our rules (ReceiptRuleSetNotActive)', () => {
    const alarms = Object.values(resources('AWS::CloudWatch::Alarm')).filter(
      (a) => a.Properties.MetricName === 'ReceiptRuleSetNotActive',
    );
    expect(alarms.map((a) => a.Properties)).toEqual([
      expect.objectContaining({
        Namespace: 'EmailService',
        Dimensions: [{ Name: 'service', Value: stack.stackName }],
        Statistic: 'Maximum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmActions: [{ Ref: idOf(stack.monitoring.alarmTopic) }],
      }),
    ]);
  });
});

describe('the settings', () => {
  it('keeps received mail receivedRetentionDays in the bucket and the table, and sent content contentRetentionDays, a lifecycle rule a prefix', () => {
    const bucket = resources('AWS::S3::Bucket')[idOf(stack.content.bucket)] as Resource;
    expect((bucket.Properties.LifecycleConfiguration as { Rules: unknown[] }).Rules).toEqual([
      { Id: 'expire-content-attachments', Prefix: 'attachments/', ExpirationInDays: 45, Status: 'Enabled' },
      { Id: 'expire-content-bodies', Prefix: 'bodies/', ExpirationInDays: 45, Status: 'Enabled' },
      { Id: 'expire-received', Prefix: 'received/', ExpirationInDays: 7, Status: 'Enabled' },
      { Id: 'expire-imports', Prefix: 'imports/', ExpirationInDays: 7, Status: 'Enabled' },
      {
        Id: 'abort-incomplete-uploads',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      },
    ]);
    for (const name of ['receive-email', 'sweep-received']) {
      const fn = resources('AWS::Lambda::Function')[fnId(name)] as Resource;
      expect(
        (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
        name,
      ).toMatchObject({ RECEIVED_RETENTION_DAYS: '7' });
    }
  });

  it('refuses a received retention that is not a whole number of days from 1', () => {
    for (const days of [0, 1.5, -3])
      expect(
        () => new ContentBucket(new Stack(new App(), 'S'), 'C', { receivedRetentionDays: days }),
      ).toThrow(/receivedRetentionDays must be a whole number of days ≥ 1/);
    const one = new ContentBucket(new Stack(new App(), 'S'), 'C', { receivedRetentionDays: 1 });
    expect(one.bucket).toBeDefined();
  });
});

describe('the receiving grants, exactly', () => {
  const statementsOf = (name: string) =>
    policiesOf(stack, template, name).map(
      ({ Action, Resource, Condition }: Statement & { Condition?: unknown }) => ({
        Action: [Action].flat().sort(),
        Resource,
        ...(Condition ? { Condition } : {}),
      }),
    );
  const bucketArn = () => ({ 'Fn::GetAtt': [idOf(stack.content.bucket), 'Arn'] });
  const objects = (prefix: string) => ({ 'Fn::Join': ['', [bucketArn(), `/${prefix}*`]] });
  const queueArn = (queue: unknown) => ({ 'Fn::GetAtt': [idOf(queue as never), 'Arn'] });

  it('receive-email and sweep-received: received/ objects only; the sweep lists received/raw/ alone and reads its failure queue', () => {
    for (const name of ['receive-email', 'sweep-received']) {
      const s3 = statementsOf(name).filter((s) => s.Action.some((a) => a.startsWith('s3:')));
      expect(s3, name).toEqual([
        {
          Action: ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'],
          Resource: objects('received/'),
        },
        ...(name === 'sweep-received'
          ? [
              {
                Action: ['s3:ListBucket'],
                Resource: bucketArn(),
                Condition: { StringLike: { 's3:prefix': ['received/raw/*'] } },
              },
            ]
          : []),
      ]);
      expect(
        statementsOf(name).filter((s) => s.Action.some((a) => a.startsWith('ses:'))),
        name,
      ).toEqual([]);
    }
    expect(statementsOf('sweep-received')).toContainEqual({
      Action: ['sqs:DeleteMessage', 'sqs:ReceiveMessage'],
      Resource: queueArn(stack.receiving?.failures),
    });
    // Lambda sends receive-email's failed invocations to its destination with the function's role.
    expect(statementsOf('receive-email')).toContainEqual({
      Action: ['sqs:SendMessage'],
      Resource: queueArn(stack.receiving?.failures),
    });
  });

  it('the rule writer and the custom resource: only the receipt-rule actions each calls (IAM has no resource type for them)', () => {
    const ses = (name: string) =>
      statementsOf(name).filter((s) => s.Action.some((a) => a.startsWith('ses:')));
    expect(ses('sync-receipt-rules')).toEqual([
      {
        Action: [
          'ses:CreateReceiptRule',
          'ses:DeleteReceiptRule',
          'ses:DescribeActiveReceiptRuleSet',
          'ses:DescribeReceiptRuleSet',
          'ses:UpdateReceiptRule',
        ],
        Resource: '*',
      },
    ]);
    expect(ses('set-up-receiving')).toEqual([
      {
        Action: [
          'ses:CreateReceiptRule',
          'ses:CreateReceiptRuleSet',
          'ses:DeleteReceiptRule',
          'ses:DeleteReceiptRuleSet',
          'ses:DescribeActiveReceiptRuleSet',
          'ses:DescribeReceiptRuleSet',
          'ses:SetActiveReceiptRuleSet',
          'ses:UpdateReceiptRule',
        ],
        Resource: '*',
      },
    ]);
    // Neither reads or writes the bucket: SES does, for the rule.
    for (const name of ['sync-receipt-rules', 'set-up-receiving'])
      expect(
        statementsOf(name).filter((s) => s.Action.some((a) => a.startsWith('s3:'))),
        name,
      ).toEqual([]);
    expect(statementsOf('set-up-receiving')).toContainEqual({
      Action: ['sqs:SendMessage'],
      Resource: queueArn(stack.receiving?.ruleQueue),
    });
  });

  it('the domain functions that ask for a sync: SendMessage on the rule queue, and its URL', () => {
    const ruleQueue = queueArn(stack.receiving?.ruleQueue);
    const senders = Object.keys(stack.functions).filter((name) =>
      statementsOf(name).some((s) => JSON.stringify(s.Resource) === JSON.stringify(ruleQueue)),
    );
    expect(senders.sort()).toEqual(
      [
        'check-domains',
        'create-domain',
        'delete-domain',
        'set-up-receiving',
        'sync-receipt-rules',
        'update-domain',
      ].sort(),
    );
    for (const name of ['check-domains', 'create-domain', 'delete-domain', 'update-domain']) {
      expect(
        statementsOf(name).filter((s) => JSON.stringify(s.Resource) === JSON.stringify(ruleQueue)),
        name,
      ).toEqual([{ Action: ['sqs:SendMessage'], Resource: ruleQueue }]);
      const fn = resources('AWS::Lambda::Function')[fnId(name)] as Resource;
      expect(
        (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
        name,
      ).toMatchObject({
        RECEIPT_RULES_QUEUE_URL: { Ref: idOf(stack.receiving?.ruleQueue as never) },
      });
    }
  });

  it("the sweep's listing is allowed under received/raw/ only; a read of a missing object still answers it 403, as every function", () => {
    const bucketId = idOf(stack.content.bucket);
    const statements = policiesOf(stack, template, 'sweep-received');
    const lists = (prefix: string) =>
      allows(statements, { action: 's3:ListBucket', resource: { kind: 'bucket-prefix', bucketId, prefix } });
    expect(lists('received/raw/')).toBe(true);
    expect(lists('received/raw/0000abc')).toBe(true);
    expect(lists('received/')).toBe(false);
    expect(lists('attachments/')).toBe(false);
    // S3 answers 404 for a missing object only to a role that may list the bucket unconditioned.
    expect(allows(statements, { action: 's3:ListBucket', resource: { kind: 'bucket', bucketId } })).toBe(
      false,
    );
    expect(missingObjectStatus('sweep-received')).toBe(403);
  });

  it('no other function may list the bucket or call SES receipt-rule actions, and none outside receiving touches received/', () => {
    const receiving = ['receive-email', 'sweep-received', 'sync-receipt-rules', 'set-up-receiving'];
    for (const name of Object.keys(stack.functions).filter((n) => !receiving.includes(n))) {
      const text = JSON.stringify(statementsOf(name));
      expect(text, name).not.toMatch(/s3:ListBucket|ReceiptRule/);
      // The receiving API's routes read received mail (GetObject only); nothing else touches it.
      if (conceptOf(name) === 'receiving')
        for (const s of statementsOf(name).filter((s) => JSON.stringify(s.Resource).includes('/received/')))
          expect(s.Action, name).toEqual(['s3:GetObject']);
      else expect(text, name).not.toMatch(/\/received\//);
    }
  });
});
