/**
 * The constructs the stack is composed of, each on its own (what it owns, what it refuses) and as
 * the stack composes them (the alarms and their thresholds, the dashboard, the ids kept from before).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { COUNTERS } from '../../functions/shared/ports.js';
import { Monitoring } from '../../lib/constructs/monitoring.js';
import { ServiceFunction } from '../../lib/constructs/service-function.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import {
  LEGACY_IDS,
  LEGACY_LOG_GROUP_IDS,
  legacyEventsSubscriptionId,
  logicalIdAt,
} from '../../lib/legacy-ids.js';
import { logicalId, resourcesOf, synthStack } from '../support/template.js';

/** A bare stack with a table, for one construct at a time. */
function bareStack() {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Bare', { env: { account: '123456789012', region: 'eu-west-1' } });
  const table = new Table(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
  return { app, stack, table };
}

type Statement = { Action: string | string[]; Resource: unknown };
const statementsOf = (template: Template, fn: ServiceFunction, stack: Stack) => {
  const roleId = logicalId(stack, fn.role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
};

describe('ServiceFunction', () => {
  it('owns its log group (30 days) and a role that may write to that log group and nothing else', () => {
    const { stack, table } = bareStack();
    const fn = new ServiceFunction(stack, 'Checker', { name: 'check-domains' })
      .grantTable(table)
      .setEnvironment('WEBHOOK_QUEUE_URL', 'https://sqs.example/queue')
      .setEnvironment('SES_EVENTS_TOPIC_ARN', 'arn:aws:sns:us-east-1:123456789012:events')
      .setEnvironment('SES_MAX_DELIVERY_SECONDS', '50400')
      .setEnvironment('DOMAIN_CONFIGURATION_SET_PREFIX', 'Bare-');
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    const logs = statementsOf(template, fn, stack).filter((s) =>
      [s.Action].flat().some((a) => a.startsWith('logs:')),
    );
    expect(logs).toEqual([
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [logicalId(stack, fn.logGroup), 'Arn'] },
      },
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      LoggingConfig: { LogGroup: Match.anyValue() },
    });
  });

  it('grants and sets the matching variable in one call: exactly its catalog entry’s actions', () => {
    const { stack, table } = bareStack();
    const queue = new Queue(stack, 'Queue');
    const bucket = new Bucket(stack, 'Content');
    const fn = new ServiceFunction(stack, 'Send', { name: 'send-email' })
      .grantTable(table)
      .grantSendQueue(queue)
      .grantContent(bucket)
      .setEnvironment('RATE_LIMIT_PER_SECOND', '10')
      .setEnvironment('DEFLATE_BODIES', 'true');
    const template = Template.fromStack(stack);
    const sqs = statementsOf(template, fn, stack).filter((s) => JSON.stringify(s.Action).includes('sqs:'));
    expect(sqs).toEqual([
      {
        Action: 'sqs:SendMessage',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [logicalId(stack, queue), 'Arn'] },
      },
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SEND_QUEUE_URL: { Ref: logicalId(stack, queue) } }) },
    });
    // S3: its actions on its prefixes' objects, each prefix its own statement, and the bucket's name.
    const objects = (prefix: string) => ({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(stack, bucket), 'Arn'] }, `/${prefix}*`]],
    });
    expect(statementsOf(template, fn, stack).filter((s) => JSON.stringify(s.Action).includes('s3:'))).toEqual(
      [
        { Action: 's3:PutObject', Effect: 'Allow', Resource: objects('attachments/') },
        { Action: 's3:PutObject', Effect: 'Allow', Resource: objects('bodies/') },
      ],
    );
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CONTENT_BUCKET: { Ref: logicalId(stack, bucket) } }) },
    });
  });

  it('refuses a variable its code does not read', () => {
    const { stack } = bareStack();
    const fn = new ServiceFunction(stack, 'Keys', { name: 'list-api-keys' });
    expect(() => fn.setEnvironment('SEND_QUEUE_URL', 'https://example')).toThrow(
      /does not read SEND_QUEUE_URL/,
    );
  });

  it('fails the synth when a variable its code reads is left unset', () => {
    const { app, stack, table } = bareStack();
    new ServiceFunction(stack, 'Sweeper', { name: 'sweep-emails' }).grantTable(table);
    expect(() => app.synth()).toThrow(/sweep-emails reads .*SEND_QUEUE_URL.*which nothing sets/);
  });

  it('refuses to bind without a resource its catalog entry needs', () => {
    const { stack, table } = bareStack();
    const fn = new ServiceFunction(stack, 'Consumer', { name: 'process-send-queue' });
    expect(() => fn.bind({ table, settings: {} })).toThrow(
      /process-send-queue needs the (send queue|configuration set)/,
    );
  });
});

describe('Monitoring', () => {
  it('sends alarms to one topic, and by email only when an address is given', () => {
    const quiet = bareStack();
    new Monitoring(quiet.stack, 'Monitoring');
    Template.fromStack(quiet.stack).resourceCountIs('AWS::SNS::Subscription', 0);

    const told = bareStack();
    new Monitoring(told.stack, 'Monitoring', { alarmEmail: 'ops@example.com' });
    const template = Template.fromStack(told.stack);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
  });

  it("lets CloudWatch publish this account's alarms to the topic, over HTTPS only", () => {
    const { stack } = bareStack();
    const monitoring = new Monitoring(stack, 'Monitoring');
    const template = Template.fromStack(stack);
    const [policy] = Object.values(template.findResources('AWS::SNS::TopicPolicy'));
    const statements = policy?.Properties.PolicyDocument.Statement as Record<string, unknown>[];
    const topic = { Ref: logicalId(stack, monitoring.alarmTopic) };
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sns:Publish',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Resource: topic,
        Condition: {
          ArnLike: { 'aws:SourceArn': expect.objectContaining({ 'Fn::Join': expect.anything() }) },
          StringEquals: { 'aws:SourceAccount': expect.anything() },
        },
      }),
    );
    expect(JSON.stringify(statements)).toContain(':alarm:*');
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it('refuses to watch more functions than one alarm can (metric math takes ten)', () => {
    const { stack } = bareStack();
    const monitoring = new Monitoring(stack, 'Monitoring');
    const many = Array.from({ length: 11 }, () => ({ function: {} as never, name: 'x' }));
    expect(() => monitoring.watchFunctions('Many', many, 'Many')).toThrow(/at most 10/);
  });
});

describe('the stack, as composed', () => {
  let stack: EmailServiceStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthStack({ alarmEmail: 'ops@example.com' }));
  });

  type Alarm = {
    Threshold: number;
    ComparisonOperator: string;
    EvaluationPeriods: number;
    TreatMissingData: string;
    AlarmActions: unknown[];
    OKActions: unknown[];
    Namespace?: string;
    MetricName?: string;
    Dimensions?: unknown[];
    Metrics?: {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { Namespace: string; MetricName: string } };
    }[];
  };
  const alarms = () =>
    Object.fromEntries(
      Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map(([id, r]) => [
        id.replace(/^Monitoring/, '').replace(/[0-9A-F]{8}$/, ''),
        r.Properties as unknown as Alarm,
      ]),
    );
  /** What an alarm watches, as `namespace:metric` (each metric of a math expression). */
  const watched = (alarm: Alarm) =>
    alarm.Metrics
      ? alarm.Metrics.filter((m) => m.MetricStat).map(
          (m) => `${m.MetricStat?.Metric.Namespace}:${m.MetricStat?.Metric.MetricName}`,
        )
      : [`${alarm.Namespace}:${alarm.MetricName}`];

  it('has the alarms docs/operations.md’s "Operate" section explains, with their thresholds', () => {
    const all = alarms();
    const ge = 'GreaterThanOrEqualToThreshold';
    const table = Object.fromEntries(
      Object.entries(all).map(([id, a]) => [
        id,
        {
          threshold: a.Threshold,
          operator: a.ComparisonOperator,
          periods: a.EvaluationPeriods,
          watches: watched(a),
        },
      ]),
    );
    const depth = [
      'AWS/SQS:ApproximateNumberOfMessagesVisible',
      'AWS/SQS:ApproximateNumberOfMessagesNotVisible',
    ];
    // The eight of before; the audience's workers the catalog declares and the unsubscribe keys'
    // rotation under an alarm of their own (one alarm watches 10 functions at most).
    // Nine with the broadcast lane's consumer.
    const background = (metric: string) => Array(9).fill(`AWS/Lambda:${metric}`);
    const audienceBackground = (metric: string) =>
      Array(stack.audience.workers.length + 1 + stack.broadcasts.workers.length).fill(`AWS/Lambda:${metric}`);
    expect(table).toEqual({
      SendDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      BroadcastLaneDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      SendQueueAge: {
        threshold: stack.timings.requeueAfterMs / 1000,
        operator: ge,
        periods: 2,
        watches: ['AWS/SQS:ApproximateAgeOfOldestMessage'],
      },
      SesEventsDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      SesSendingBlocked: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: ['EmailService:SesSendingBlocked'],
      },
      SesBounceRate: {
        threshold: 0.05,
        operator: ge,
        periods: 1,
        watches: ['AWS/SES:Reputation.BounceRate'],
      },
      SesComplaintRate: {
        threshold: 0.001,
        operator: ge,
        periods: 1,
        watches: ['AWS/SES:Reputation.ComplaintRate'],
      },
      Api5xx: { threshold: 5, operator: ge, periods: 1, watches: ['AWS/ApiGateway:5xx'] },
      BackgroundErrors: { threshold: 1, operator: ge, periods: 1, watches: background('Errors') },
      BackgroundThrottles: { threshold: 1, operator: ge, periods: 1, watches: background('Throttles') },
      AudienceBackgroundErrors: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: audienceBackground('Errors'),
      },
      AudienceBackgroundThrottles: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: audienceBackground('Throttles'),
      },
      WebhookDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      RequestLogDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      ContactImportDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      AudienceCleanupDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      BroadcastFanOutDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      WebhookPublishFailed: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: ['EmailService:WebhookPublishFailed'],
      },
      WebhooksDisabled: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: ['EmailService:WebhooksDisabled'],
      },
      // Receiving (synthesized in us-east-1, where SES receives).
      ReceivedMailFailed: { threshold: 1, operator: ge, periods: 3, watches: depth },
      ReceiptRuleDeadLetters: { threshold: 1, operator: ge, periods: 1, watches: depth },
      ReceiptRuleSetNotActive: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: ['EmailService:ReceiptRuleSetNotActive'],
      },
      ReceivingErrors: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: Array(4).fill('AWS/Lambda:Errors'),
      },
      ReceivingThrottles: {
        threshold: 1,
        operator: ge,
        periods: 1,
        watches: Array(4).fill('AWS/Lambda:Throttles'),
      },
    });
    // Each names what it watches: the right queue, this API, these functions.
    const text = (id: string) => JSON.stringify(all[id]);
    expect(text('SendDeadLetters')).toContain(logicalId(stack, stack.send.deadLetterQueue));
    expect(text('SendQueueAge')).toContain(logicalId(stack, stack.send.queue));
    expect(text('SesEventsDeadLetters')).toContain(logicalId(stack, stack.sesEvents.deadLetterQueue));
    expect(text('WebhookDeadLetters')).toContain(logicalId(stack, stack.webhooks.deadLetterQueue));
    expect(text('RequestLogDeadLetters')).toContain(
      logicalId(stack, stack.requestLogs?.deadLetterQueue as never),
    );
    expect(text('Api5xx')).toContain(logicalId(stack, stack.api.api));
    expect(text('ReceivedMailFailed')).toContain(logicalId(stack, stack.receiving?.failures as never));
    expect(text('ReceiptRuleDeadLetters')).toContain(
      logicalId(stack, stack.receiving?.ruleDeadLetterQueue as never),
    );
    for (const fn of stack.receiving?.functions ?? [])
      expect(text('ReceivingErrors')).toContain(logicalId(stack, fn.function));
    for (const fn of [
      stack.send.consumer,
      stack.send.sweeper,
      stack.send.scheduler,
      stack.sesEvents.consumer,
      stack.domainCheck.checker,
      stack.webhooks.delivery,
      stack.webhooks.retries,
      stack.metricsRollUp,
    ])
      expect(text('BackgroundErrors')).toContain(logicalId(stack, fn.function));
  });

  it('notifies the alarm topic when each alarm goes off and when it clears; missing data is not a breach', () => {
    const topic = { Ref: logicalId(stack, stack.monitoring.alarmTopic) };
    for (const [id, alarm] of Object.entries(alarms())) {
      expect(alarm.AlarmActions, id).toEqual([topic]);
      expect(alarm.OKActions, id).toEqual([topic]);
      expect(alarm.TreatMissingData, id).toBe('notBreaching');
    }
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: topic,
    });
    template.hasOutput('AlarmTopicArn', { Value: topic });
  });

  it('has a dashboard showing every counter the functions write, the queues and SES reputation', () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    for (const counter of COUNTERS) expect(body, counter).toContain(`\\"${counter}\\"`);
    for (const metric of [
      'ApproximateAgeOfOldestMessage',
      'ApproximateNumberOfMessagesVisible',
      'Reputation.BounceRate',
      'Reputation.ComplaintRate',
      '5xx',
      'Latency',
      'Errors',
      'Throttles',
      'Duration',
    ])
      expect(body, metric).toContain(`\\"${metric}\\"`);
    // The counters as Powertools writes them: namespace EmailService, dimension service = the stack.
    expect(body).toContain('\\"EmailService\\",\\"EmailsSent\\",\\"service\\",\\"Test\\"');
  });

  it('keeps the logical ids of everything that holds data or an address (docs/operations.md, "Upgrading")', () => {
    const resources = template.toJSON().Resources as Record<string, { Type: string }>;
    const types: Record<keyof typeof LEGACY_IDS, string> = {
      table: 'AWS::DynamoDB::Table',
      sendQueue: 'AWS::SQS::Queue',
      sendDeadLetterQueue: 'AWS::SQS::Queue',
      eventsQueue: 'AWS::SQS::Queue',
      eventsDeadLetterQueue: 'AWS::SQS::Queue',
      eventsTopic: 'AWS::SNS::Topic',
      configurationSet: 'AWS::SES::ConfigurationSet',
      configurationSetEventDestination: 'AWS::SES::ConfigurationSetEventDestination',
      api: 'AWS::ApiGatewayV2::Api',
      stage: 'AWS::ApiGatewayV2::Stage',
      accessLogs: 'AWS::Logs::LogGroup',
      sendQueuePolicy: 'AWS::SQS::QueuePolicy',
      sendDeadLetterQueuePolicy: 'AWS::SQS::QueuePolicy',
      eventsQueuePolicy: 'AWS::SQS::QueuePolicy',
      eventsDeadLetterQueuePolicy: 'AWS::SQS::QueuePolicy',
      eventsTopicPolicy: 'AWS::SNS::TopicPolicy',
    };
    for (const [name, id] of Object.entries(LEGACY_IDS))
      expect(resources[id]?.Type, name).toBe(types[name as keyof typeof LEGACY_IDS]);
    expect(logicalId(stack, stack.table.table)).toBe(LEGACY_IDS.table);
    expect(logicalId(stack, stack.send.queue)).toBe(LEGACY_IDS.sendQueue);
    expect(logicalId(stack, stack.sesEvents.configurationSet)).toBe(LEGACY_IDS.configurationSet);
    // Every function that existed then keeps its log group; functions added since have their own.
    const names = stack.serviceFunctions.map((fn) => fn.name);
    for (const name of Object.keys(LEGACY_LOG_GROUP_IDS)) expect(names).toContain(name);
    for (const fn of stack.serviceFunctions)
      if (LEGACY_LOG_GROUP_IDS[fn.name])
        expect(logicalId(stack, fn.logGroup), fn.name).toBe(LEGACY_LOG_GROUP_IDS[fn.name]);
  });

  it('pins each id to what CDK gave the resource at its construct path before the constructs', () => {
    // The stack of 0970a30 and before built everything at its top level, under these paths.
    const before: Record<keyof typeof LEGACY_IDS, string[]> = {
      table: ['Table', 'Resource'],
      sendQueue: ['SendQueue', 'Resource'],
      sendDeadLetterQueue: ['SendDeadLetterQueue', 'Resource'],
      eventsQueue: ['SesEventsQueue', 'Resource'],
      eventsDeadLetterQueue: ['SesEventsDeadLetterQueue', 'Resource'],
      eventsTopic: ['SesEventsTopic', 'Resource'],
      configurationSet: ['ConfigurationSet', 'Resource'],
      configurationSetEventDestination: ['ConfigurationSet', 'ToSns', 'Resource'],
      api: ['Api', 'Resource'],
      stage: ['DefaultStage', 'Resource'],
      accessLogs: ['ApiAccessLogs', 'Resource'],
      sendQueuePolicy: ['SendQueue', 'Policy', 'Resource'],
      sendDeadLetterQueuePolicy: ['SendDeadLetterQueue', 'Policy', 'Resource'],
      eventsQueuePolicy: ['SesEventsQueue', 'Policy', 'Resource'],
      eventsDeadLetterQueuePolicy: ['SesEventsDeadLetterQueue', 'Policy', 'Resource'],
      eventsTopicPolicy: ['SesEventsTopic', 'Policy', 'Resource'],
    };
    for (const [name, path] of Object.entries(before))
      expect(LEGACY_IDS[name as keyof typeof LEGACY_IDS], name).toBe(logicalIdAt(path));
    const pascal = (name: string) =>
      name
        .split('-')
        .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
        .join('');
    for (const [name, id] of Object.entries(LEGACY_LOG_GROUP_IDS))
      expect(id, name).toBe(logicalIdAt([`${pascal(name)}Logs`, 'Resource']));
    // CDK's own scheme, on ids known from the old template.
    expect(logicalIdAt(['Table', 'Resource'])).toBe('TableCD117FA1');
    expect(logicalIdAt(['ConfigurationSet', 'ToSns', 'Resource'])).toBe('ConfigurationSetToSnsDBE56006');
  });

  it('keeps each route and the events subscription where they were: a second one of either would collide', () => {
    // The ids a stack named EmailService had before the constructs (from its template): a route key
    // exists once per API, and a second subscription of the queue would be removed with the first.
    const before: Record<string, string> = {
      $default: 'ApiDefaultRoute1D83B0D8',
      'POST /v1/emails': 'ApiPOSTv1emails63FDE981',
      'GET /v1/emails': 'ApiGETv1emailsC877B8E8',
      'GET /v1/emails/{id}': 'ApiGETv1emailsid3D431964',
      'POST /v1/domains': 'ApiPOSTv1domainsCDA2A108',
      'GET /v1/domains': 'ApiGETv1domainsA8B949A6',
      'GET /v1/domains/{id}': 'ApiGETv1domainsid81A80424',
      'POST /v1/domains/{id}/verify': 'ApiPOSTv1domainsidverify50A5029B',
      'DELETE /v1/domains/{id}': 'ApiDELETEv1domainsid92D9AC84',
      'POST /v1/api-keys': 'ApiPOSTv1apikeys27DB6B34',
      'GET /v1/api-keys': 'ApiGETv1apikeys26AAFE48',
      'DELETE /v1/api-keys/{id}': 'ApiDELETEv1apikeysid9824EC68',
    };
    const routes = template.findResources('AWS::ApiGatewayV2::Route');
    for (const [key, id] of Object.entries(before)) expect(routes[id]?.Properties.RouteKey, key).toBe(key);
    expect(legacyEventsSubscriptionId('EmailService')).toBe(
      'SesEventsQueueEmailServiceSesEventsTopic10A2508DE70045B6',
    );
    // Computed from the stack's name, so any stackName keeps its own.
    expect(logicalId(stack, stack.sesEvents.subscription)).toBe(legacyEventsSubscriptionId(stack.stackName));
  });

  it('reads as a composition: no construct looks a function up by a string', () => {
    const dir = new URL('../../lib/', import.meta.url);
    const files = [
      'email-service-stack.ts',
      ...readdirSync(new URL('constructs/', dir)).map((f) => `constructs/${f}`),
    ];
    for (const file of files) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      expect(source, file).not.toMatch(/functions\[['"`]/);
      expect(source, file).not.toMatch(/\.addEnvironment\(['"]/);
    }
  });
});
