import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { INDEXES } from '../../functions/adapters/dynamodb/table.js';
import { ROUTES } from '../../functions/routes.js';
import { EmailServiceStack } from '../../lib/email-service-stack.js';

let template: Template;
let stack: EmailServiceStack;

beforeAll(() => {
  // Skip esbuild bundling here: the template is what these tests are about.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new EmailServiceStack(app, 'Test', { env: { account: '123456789012', region: 'us-east-1' } });
  template = Template.fromStack(stack);
});

type Resource = { Type: string; Properties: Record<string, unknown> };
const resources = (type: string) => template.findResources(type) as Record<string, Resource>;

type Statement = { Action: string | string[]; Resource: unknown };

/** Every policy statement attached to a function's role. */
function policiesOf(functionName: string): Statement[] {
  const fn = stack.functions[functionName];
  if (!fn) throw new Error(`no function ${functionName}`);
  const roleId = stack.getLogicalId(fn.role?.node.defaultChild as never);
  return Object.values(resources('AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** Every IAM action a function's role allows, sorted. */
const actionsOf = (functionName: string): string[] =>
  [...new Set(policiesOf(functionName).flatMap((statement) => [statement.Action].flat()))].sort();

describe('EmailServiceStack', () => {
  it.each([
    ['with an explicit account and region', { account: '123456789012', region: 'eu-west-1' }],
    ['environment-agnostic (as bin/app.ts without CDK_DEFAULT_*)', undefined],
  ])('passes the cdk-nag AwsSolutions checks %s; what it acknowledges says why', (_, env) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const nagged = new EmailServiceStack(app, 'Nagged', { env });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
    // Recorded as { "Annotation::<rule id>": "<reason>" }.
    const acknowledged = nagged.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([id, reason]) => ({ id: id.replace(/^Annotation::/, ''), reason }));
    expect(new Set(acknowledged.map((a) => a.id.replace(/\[.*$/, '')))).toEqual(
      new Set(['AwsSolutions-L1', 'AwsSolutions-APIG4', 'AwsSolutions-IAM5']),
    );
    for (const a of acknowledged) expect(a.reason.length).toBeGreaterThan(40);
  });

  it('routes each endpoint of the route table to its own function, and everything else to the fallback', () => {
    const routes = resources('AWS::ApiGatewayV2::Route');
    const keys = Object.values(routes)
      .map((r) => r.Properties.RouteKey)
      .sort();
    expect(keys).toEqual([...ROUTES.map((r) => `${r.method} ${r.path}`), '$default'].sort());
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

  it('bundles every function for Node 22 on arm64', () => {
    const functions = Object.values(resources('AWS::Lambda::Function'));
    // one per route + fallback + send consumer + SES events consumer + domain check (+ none other)
    expect(functions.filter((f) => f.Properties.Runtime === 'nodejs22.x')).toHaveLength(ROUTES.length + 4);
    for (const fn of functions.filter((f) => f.Properties.Runtime === 'nodejs22.x')) {
      expect(fn.Properties.Architectures).toEqual(['arm64']);
    }
  });

  it('has one on-demand table with generic keys and the two listing indexes', () => {
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
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'created_at'] },
      })),
    });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  it('feeds the send queue (with a dead-letter queue) to the consumer with partial batch responses', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 180,
      MaximumMessageSize: 1048576,
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 5 },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    const mappings = Object.values(resources('AWS::Lambda::EventSourceMapping'));
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings)
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    // The consumer knows the attempt after which its message goes to the DLQ.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SEND_MAX_RECEIVE_COUNT: '5' }) },
    });
  });

  it('publishes SES events of its configuration set through SNS (raw) to the events queue', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: Match.objectLike({
        Enabled: true,
        MatchingEventTypes: [
          'reject',
          'bounce',
          'complaint',
          'delivery',
          'deliveryDelay',
          'renderingFailure',
        ],
        SnsDestination: Match.anyValue(),
      }),
    });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'sqs', RawMessageDelivery: true });
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

  it('grants each function exactly what it needs (least privilege)', () => {
    const logs = ['logs:CreateLogStream', 'logs:PutLogEvents'];
    const consume = [
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ];
    // Every API function looks up the caller's key (GetItem) and counts the request (UpdateItem).
    const http = ['dynamodb:GetItem', 'dynamodb:UpdateItem'];
    const expected: Record<string, string[]> = {
      'send-email': [
        ...http,
        'dynamodb:BatchWriteItem',
        'dynamodb:DeleteItem',
        'dynamodb:PutItem',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ],
      'list-emails': [...http, 'dynamodb:BatchGetItem', 'dynamodb:Query'],
      'get-email': [...http, 'dynamodb:Query'],
      'route-not-found': http,
      'process-send-queue': ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'ses:SendEmail', ...consume],
      'process-ses-events': ['dynamodb:PutItem', 'dynamodb:UpdateItem', ...consume],
      'create-domain': [
        ...http,
        'dynamodb:DeleteItem',
        'dynamodb:PutItem',
        'ses:CreateEmailIdentity',
        'ses:GetEmailIdentity',
        'ses:PutEmailIdentityMailFromAttributes',
        'ses:TagResource',
      ],
      'list-domains': [...http, 'dynamodb:Query'],
      'get-domain': [...http, 'dynamodb:PutItem', 'ses:GetEmailIdentity'],
      'verify-domain': [...http, 'dynamodb:PutItem', 'ses:GetEmailIdentity'],
      'delete-domain': [...http, 'dynamodb:DeleteItem', 'ses:DeleteEmailIdentity'],
      'check-domains': ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'ses:GetEmailIdentity'],
      'create-api-key': [...http, 'dynamodb:PutItem'],
      'list-api-keys': [...http, 'dynamodb:BatchGetItem', 'dynamodb:Query'],
      'delete-api-key': [...http, 'dynamodb:DeleteItem'],
    };
    expect(Object.keys(stack.functions).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, actions] of Object.entries(expected)) {
      expect(actionsOf(name), name).toEqual([...actions, ...logs].sort());
    }
  });

  it('reaches the listing indexes only from list-emails, by name, and uses no managed policy', () => {
    const policyText = (name: string) => JSON.stringify(policiesOf(name));
    for (const name of Object.keys(stack.functions)) {
      expect(policyText(name), name).not.toContain('/index/*');
      if (name === 'list-emails') {
        for (const index of Object.values(INDEXES))
          expect(policyText(name)).toContain(`/index/${index.name}`);
      } else {
        expect(policyText(name), name).not.toContain('/index/');
      }
    }
    for (const role of Object.values(resources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('lets each function write to its own log group only', () => {
    for (const [name, fn] of Object.entries(stack.functions)) {
      const logGroupId = stack.getLogicalId(fn.logGroup.node.defaultChild as never);
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

  it('scopes ses:SendEmail to identities and its own configuration set', () => {
    const ses = policiesOf('process-send-queue').filter((s) => JSON.stringify(s.Action).includes('ses:'));
    expect(ses).toHaveLength(1);
    expect(ses[0]?.Action).toBe('ses:SendEmail');
    const resourcesText = JSON.stringify(ses[0]?.Resource);
    expect(resourcesText).toContain(':identity/*');
    expect(resourcesText).toContain(':configuration-set/');
    expect(resourcesText).toContain(stack.getLogicalId(stack.configurationSet.node.defaultChild as never));
    expect(resourcesText).not.toMatch(/"\*"/);
  });

  it('gives the domain functions SES identity actions only, on identities of this account and region', () => {
    for (const name of ['create-domain', 'get-domain', 'verify-domain', 'delete-domain', 'check-domains']) {
      const ses = policiesOf(name).filter((s) => JSON.stringify(s.Action).includes('ses:'));
      expect(ses, name).toHaveLength(1);
      for (const action of [ses[0]?.Action].flat()) {
        expect(String(action)).toMatch(/^ses:(\w*EmailIdentity\w*|TagResource)$/);
      }
      expect(JSON.stringify(ses[0]?.Resource)).toMatch(/:ses:us-east-1:123456789012:identity\/\*/);
    }
  });

  it('re-checks pending domains on a schedule (every minute by default)', () => {
    const checker = stack.getLogicalId(stack.functions['check-domains']?.node.defaultChild as never);
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

  it('limits each key to 10 requests per second by default (counted in the table, whose counters expire by TTL)', () => {
    const apiFunctions = [...ROUTES.map((r) => r.handler), 'route-not-found'];
    for (const name of apiFunctions) {
      const id = stack.getLogicalId(stack.functions[name]?.node.defaultChild as never);
      const fn = template.toJSON().Resources[id];
      expect(fn.Properties.Environment.Variables.RATE_LIMIT_PER_SECOND, name).toBe('10');
    }
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const custom = Template.fromStack(new EmailServiceStack(app, 'Custom', { keyRateLimit: 25 }));
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ RATE_LIMIT_PER_SECOND: '25' }) },
    });
  });

  it('outputs the API base URL with /v1 and the table name for the first-key script', () => {
    template.hasOutput('ApiUrl', { Value: { 'Fn::Join': ['', Match.arrayWith(['/v1'])] } });
    template.hasOutput('TableName', Match.anyValue());
  });
});
