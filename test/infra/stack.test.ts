import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
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

/** Logical id of a function's role → every IAM action its policies allow. */
function actionsOf(functionName: string): string[] {
  const fn = stack.functions[functionName];
  if (!fn) throw new Error(`no function ${functionName}`);
  const roleId = stack.getLogicalId(fn.role?.node.defaultChild as never);
  const actions: string[] = [];
  for (const policy of Object.values(resources('AWS::IAM::Policy'))) {
    const roles = policy.Properties.Roles as { Ref: string }[];
    if (!roles.some((r) => r.Ref === roleId)) continue;
    const doc = policy.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] };
    for (const statement of doc.Statement) actions.push(...[statement.Action].flat());
  }
  return [...new Set(actions)].sort();
}

describe('EmailServiceStack', () => {
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
    // 3 routes + fallback + send consumer + SES events consumer (+ none other)
    expect(functions.filter((f) => f.Properties.Runtime === 'nodejs22.x')).toHaveLength(ROUTES.length + 3);
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
    expect(actionsOf('send-email')).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:SendMessage',
    ]);
    expect(actionsOf('list-emails')).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']);
    expect(actionsOf('get-email')).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
    expect(actionsOf('route-not-found')).toEqual([]);
    expect(actionsOf('process-send-queue')).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'ses:SendEmail',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    expect(actionsOf('process-ses-events')).toEqual([
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
  });

  it('scopes ses:SendEmail to identities and its own configuration set', () => {
    const statements = Object.values(resources('AWS::IAM::Policy')).flatMap(
      (p) =>
        (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
    );
    const ses = statements.filter((s) => JSON.stringify(s.Action).includes('ses:'));
    expect(ses).toHaveLength(1);
    expect(ses[0]?.Action).toBe('ses:SendEmail');
    const resourcesText = JSON.stringify(ses[0]?.Resource);
    expect(resourcesText).toContain(':identity/*');
    expect(resourcesText).toContain(':configuration-set/');
    expect(resourcesText).toContain(stack.getLogicalId(stack.configurationSet.node.defaultChild as never));
    expect(resourcesText).not.toMatch(/"\*"/);
  });

  it('outputs the API base URL with /v1 and the table name for the first-key script', () => {
    template.hasOutput('ApiUrl', { Value: { 'Fn::Join': ['', Match.arrayWith(['/v1'])] } });
    template.hasOutput('TableName', Match.anyValue());
  });
});
