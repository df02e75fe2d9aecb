/**
 * How the service is cut into templates (docs/architecture.md, "Stacks"): the parent keeps what
 * holds state or an address, and every function's log group; a nested stack per concept holds that
 * concept's functions. Each template stays well under CloudFormation's limits with room for 100
 * more routes, an update over a stack deployed before the split keeps every stateful resource, and
 * API Gateway invokes the functions through one role per stack instead of a permission per function.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, SCHEDULED_FUNCTIONS } from '../../functions/catalog.js';
import { FALLBACK_HANDLER, HEAD_ROUTES, ROUTES } from '../../functions/routes.js';
import { buildApp } from '../../lib/app.js';
import { CONCEPTS, conceptOf } from '../../lib/concepts.js';
import { MAX_INVOKED_FUNCTIONS } from '../../lib/constructs/api-integrations.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { FRONT_DOOR_ORIGIN, logicalId, type Statement, synthStack } from '../support/template.js';

/** CloudFormation refuses a template of more than 500 resources; the service keeps to 400. */
const BOUND = 400;
/**
 * Routes the parent must take beyond today's: 100 before issue 39's, 90 before issue 40's, whose
 * 41 audience routes (and the unsubscribe keys' secret and rotation) took about half of them; 45
 * before issue 41's, whose queues (the fan-out queue, the broadcast lane, their dead-letter queues
 * and alarms), 11 broadcast routes and 2 workers' log groups took 17 (the parent at 340).
 */
const MORE_ROUTES = 28;
/**
 * Routes any one concept's stack takes on its own: 45 before issue 40, 35 since the audiences' stack
 * holds 25 route functions (60 − 25, its invoke role's bound, below its resources' bound).
 */
const ONE_CONCEPT = 35;

type Json = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };

/** Every template `cdk synth` writes, by stack path: as the CLI runs it (version reporting on). */
function synthesized(region: string) {
  const app = new App({
    analyticsReporting: true,
    context: {
      'aws:cdk:bundling-stacks': [],
      frontDoor: 'true',
      frontDoorDomain: FRONT_DOOR_ORIGIN.originDomainName,
      frontDoorCertificateArn: FRONT_DOOR_ORIGIN.originCertificateArn.replace('us-east-1', region),
    },
  });
  const { service } = buildApp(app, { account: '123456789012', region });
  const stacks = app.node.findAll().filter((c): c is Stack => Stack.isStack(c));
  return {
    service,
    templates: new Map(stacks.map((s) => [s.node.path, Template.fromStack(s).toJSON()])),
  };
}

describe('the concepts', () => {
  let stack: EmailServiceStack;
  beforeAll(() => {
    ({ stack } = synthStack());
  });

  it('give every function of the catalog a concept, and deploy it in that concept’s stack', () => {
    for (const name of Object.keys(FUNCTIONS)) {
      expect(CONCEPTS, name).toContain(conceptOf(name));
      const fn = stack.functions[name];
      expect(fn, name).toBeDefined();
      expect(Stack.of(fn as never), name).toBe(stack.concepts.stacks.get(conceptOf(name)));
    }
    // No concept without a function; none unknown.
    expect(new Set(Object.keys(FUNCTIONS).map(conceptOf))).toEqual(new Set(CONCEPTS));
    expect(() => conceptOf('no-such-function')).toThrow(/declared in no concept/);
  });

  it('leave each function’s log group in the parent, and nothing but functions’ own resources in the nested stacks', () => {
    for (const [name, logGroup] of stack.concepts.logGroups) expect(Stack.of(logGroup), name).toBe(stack);
    for (const nested of stack.concepts.stacks.values()) {
      const types = new Set(
        Object.values(Template.fromStack(nested).toJSON().Resources as Record<string, Json>).map(
          (r) => r.Type,
        ),
      );
      expect([...types].sort(), nested.node.id).toEqual(
        expect.arrayContaining(['AWS::IAM::Policy', 'AWS::IAM::Role', 'AWS::Lambda::Function']),
      );
      for (const type of types)
        expect(
          [
            'AWS::ApiGatewayV2::Integration',
            'AWS::Events::Rule',
            'AWS::IAM::Policy',
            'AWS::IAM::Role',
            'AWS::Lambda::EventInvokeConfig',
            'AWS::Lambda::EventSourceMapping',
            'AWS::Lambda::Function',
            'AWS::Lambda::Permission',
            'AWS::Logs::SubscriptionFilter',
            // Receiving's first rule, made by its custom resource beside the functions it names.
            'Custom::ReceiptRules',
          ],
          `${nested.node.id} holds ${type}`,
        ).toContain(type);
    }
  });
});

describe.each(['us-east-1', 'eu-west-1'])('every template of the synth, front door on (%s)', (region) => {
  let synth: ReturnType<typeof synthesized>;
  beforeAll(() => {
    synth = synthesized(region);
  });

  it(`holds at most ${BOUND} resources, and parameters and outputs well within CloudFormation's 200 each`, () => {
    // The parent, each concept's stack, and outside us-east-1 the firewall's stack.
    expect(synth.templates.size).toBe(
      1 + synth.service.concepts.stacks.size + (region === 'us-east-1' ? 0 : 1),
    );
    for (const [path, template] of synth.templates) {
      expect(Object.keys(template.Resources).length, path).toBeLessThanOrEqual(BOUND);
      expect(Object.keys(template.Parameters ?? {}).length, path).toBeLessThanOrEqual(100);
      expect(Object.keys(template.Outputs ?? {}).length, path).toBeLessThanOrEqual(100);
    }
  });
});

describe('what a route costs, and the room left', () => {
  let stack: EmailServiceStack;
  let template: Template;
  let templates: Map<string, Template>;
  /** Which template (by stack path) holds each logical id. */
  const home = new Map<string, string>();
  beforeAll(() => {
    ({ stack, template, templates } = synthStack({
      frontDoor: { requestsPerFiveMinutes: 1000, ...FRONT_DOOR_ORIGIN },
    }));
    for (const [path, t] of templates)
      for (const id of Object.keys(t.toJSON().Resources)) {
        expect(home.has(id), id).toBe(false);
        home.set(id, path);
      }
  });
  const resources = () => template.toJSON().Resources as Record<string, Json>;
  const ofType = (type: string) => Object.entries(resources()).filter(([, r]) => r.Type === type);
  const refersTo = (value: unknown, id: string) =>
    JSON.stringify(value) === JSON.stringify({ Ref: id }) ||
    JSON.stringify(value) === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] });

  /** The resources a route brings, found by following its references, by template. */
  function costOf(routeKey: string): Record<string, string[]> {
    const [[routeId, route] = []] = ofType('AWS::ApiGatewayV2::Route').filter(
      ([, r]) => r.Properties.RouteKey === routeKey,
    );
    if (!routeId || !route) throw new Error(`no route ${routeKey}`);
    const target = JSON.stringify(route.Properties.Target);
    const [integrationId] = ofType('AWS::ApiGatewayV2::Integration')
      .map(([id]) => id)
      .filter((id) => target.includes(`{"Ref":"${id}"}`));
    const integration = resources()[integrationId as string] as Json;
    const fnId = (integration.Properties.IntegrationUri as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const fn = resources()[fnId] as Json;
    const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const logGroupId = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    const owned = [
      routeId,
      integrationId as string,
      fnId,
      roleId,
      logGroupId,
      ...ofType('AWS::IAM::Policy')
        .filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => refersTo(r, roleId)))
        .map(([id]) => id),
      ...ofType('AWS::Logs::SubscriptionFilter')
        .filter(([, f]) => refersTo(f.Properties.LogGroupName, logGroupId))
        .map(([id]) => id),
      ...[
        'AWS::Lambda::Permission',
        'AWS::Lambda::EventSourceMapping',
        'AWS::Events::Rule',
        'AWS::Lambda::Url',
        'AWS::Lambda::EventInvokeConfig',
      ].flatMap((type) =>
        ofType(type)
          .filter(([, r]) => JSON.stringify(r.Properties).includes(`"${fnId}"`))
          .map(([id]) => id),
      ),
    ];
    const byTemplate: Record<string, string[]> = {};
    for (const id of owned) {
      const path = home.get(id) as string;
      byTemplate[path] = [...(byTemplate[path] ?? []), `${(resources()[id] as Json).Type}`].sort();
    }
    return byTemplate;
  }

  it('is 2 resources in the parent (its route, its function’s log group) and 5 in its concept’s stack, no invoke permission', () => {
    const keys = [...ROUTES.map((r) => `${r.method} ${r.path}`), '$default'];
    const handlers = [...ROUTES.map((r) => r.handler), FALLBACK_HANDLER];
    keys.forEach((key, i) => {
      const handler = handlers[i] as string;
      const own = stack.concepts.stacks.get(conceptOf(handler))?.node.path as string;
      expect(costOf(key), key).toEqual({
        [stack.node.path]: ['AWS::ApiGatewayV2::Route', 'AWS::Logs::LogGroup'],
        [own]: [
          'AWS::ApiGatewayV2::Integration',
          'AWS::IAM::Policy',
          'AWS::IAM::Role',
          'AWS::Lambda::Function',
          'AWS::Logs::SubscriptionFilter',
        ],
      });
    });
    // A HEAD route (a public page's) targets its GET's integration: one route more in the parent, nothing else.
    expect(HEAD_ROUTES.length).toBeGreaterThan(0);
    const targetOf = (key: string) =>
      ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === key)?.[1].Properties
        .Target;
    for (const { path } of HEAD_ROUTES) {
      expect(targetOf(`HEAD ${path}`), `HEAD ${path}`).toBeDefined();
      expect(targetOf(`HEAD ${path}`), `HEAD ${path}`).toEqual(targetOf(`GET ${path}`));
    }
    // 7 in all, where one template took 8 (a Lambda permission each); the only permissions left
    // are the schedules' (receiving's sweep's too), the request-log writer's, the front door's
    // authorizer's, and SES's to invoke receive-email.
    const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties.Principal);
    expect(permissions.sort()).toEqual(
      [
        // The unsubscribe keys' monthly rotation is scheduled by its own construct (UnsubscribeKeys).
        ...[...SCHEDULED_FUNCTIONS, 'sweep-received', 'rotate-unsubscribe-keys'].map(
          () => 'events.amazonaws.com',
        ),
        'logs.amazonaws.com',
        'apigateway.amazonaws.com',
        'ses.amazonaws.com',
      ].sort(),
    );
  });

  it(`leaves room for ${MORE_ROUTES} more routes: the parent grows 2 a route, a concept's stack 5`, () => {
    // What `cdk synth` writes adds one resource to each template (CDK's version report).
    const report = 1;
    const parent = Object.keys(templates.get(stack.node.path)?.toJSON().Resources).length + report;
    // The parent: today's resources, 2 a route for 28 routes, and a nested stack each for up
    // to 3 new concepts: 340 + 56 + 3 = 399 ≤ 400 (docs/architecture.md "Stacks").
    expect(parent + 2 * MORE_ROUTES + 3).toBeLessThanOrEqual(BOUND);
    // A concept's stack: 5 a route, up to MAX_INVOKED_FUNCTIONS (60) API functions a stack (its
    // invoke role's policy size). Each has room for 35 routes on its own (the audiences' stack, with
    // 25 route functions, the most: 25 + 35 = 60), and all together for far more than 100.
    let room = 0;
    for (const [concept, nested] of stack.concepts.stacks) {
      const count = Object.keys(templates.get(nested.node.path)?.toJSON().Resources).length + report;
      const routes = [...stack.api.functions.values()].filter((fn) => Stack.of(fn) === nested).length;
      const fits = Math.min(Math.floor((BOUND - count) / 5), MAX_INVOKED_FUNCTIONS - routes);
      expect(fits, concept).toBeGreaterThanOrEqual(ONE_CONCEPT);
      room += fits;
    }
    expect(room).toBeGreaterThanOrEqual(MORE_ROUTES);
  });
});

describe('API Gateway invokes the functions through one role per stack', () => {
  let stack: EmailServiceStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthStack());
  });

  it('allows each role lambda:InvokeFunction on exactly the API functions of its stack, and nothing else', () => {
    const resources = template.toJSON().Resources as Record<string, Json>;
    const integrations = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Integration');
    expect(integrations).toHaveLength(ROUTES.length + 1);
    const invoked = new Map<string, Set<string>>();
    for (const integration of integrations) {
      const roleId = (integration.Properties.CredentialsArn as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      const fnId = (integration.Properties.IntegrationUri as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
      });
      invoked.set(roleId, (invoked.get(roleId) ?? new Set()).add(fnId));
    }
    // One role a stack that has routes (receiving's workers are invoked by SES and schedules).
    const apiStacks = new Set([...stack.api.functions.values()].map((fn) => Stack.of(fn)));
    expect(invoked.size).toBe(apiStacks.size);
    for (const [roleId, functions] of invoked) {
      const role = resources[roleId] as Json;
      expect(role.Properties.AssumeRolePolicyDocument).toEqual({
        Statement: [
          { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } },
        ],
        Version: '2012-10-17',
      });
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      const statements = Object.values(resources)
        .filter(
          (r) =>
            r.Type === 'AWS::IAM::Policy' &&
            JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
        )
        .flatMap((p) => (p.Properties.PolicyDocument as { Statement: unknown[] }).Statement);
      expect(statements).toHaveLength(1);
      const [statement] = statements as Statement[];
      expect(statement).toMatchObject({ Action: 'lambda:InvokeFunction', Effect: 'Allow' });
      expect([statement?.Resource].flat()).toEqual(
        [...functions].map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })),
      );
    }
    // Together: every route's function and the fallback, none other.
    const all = [...invoked.values()].flatMap((set) => [...set]).sort();
    expect(all).toEqual([...stack.api.functions.values()].map((fn) => logicalId(stack, fn.function)).sort());
    expect(all).toHaveLength(ROUTES.length + 1);
  });

  it('routes each route to its handler’s function', () => {
    const resources = template.toJSON().Resources as Record<string, Json>;
    const routes = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route');
    for (const { method, path, handler } of [
      ...ROUTES,
      ...HEAD_ROUTES,
      { method: '$default', path: '', handler: FALLBACK_HANDLER },
    ]) {
      const key = method === '$default' ? '$default' : `${method} ${path}`;
      const route = routes.find((r) => r.Properties.RouteKey === key);
      if (!route) throw new Error(`no route ${key}`);
      const target = route.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
      const integrationId = target['Fn::Join'][1][1].Ref;
      const uri = resources[integrationId]?.Properties.IntegrationUri;
      expect(uri, key).toEqual({
        'Fn::GetAtt': [logicalId(stack, stack.functions[handler] as never), 'Arn'],
      });
    }
  });
});

describe('an update over a stack deployed before the split', () => {
  let stack: EmailServiceStack;
  let parent: Record<string, Json>;
  let template: Template;
  beforeAll(() => {
    let templates: Map<string, Template>;
    ({ stack, template, templates } = synthStack({
      frontDoor: { requestsPerFiveMinutes: 1000, ...FRONT_DOOR_ORIGIN },
    }));
    parent = templates.get(stack.node.path)?.toJSON().Resources;
  });

  it('keeps the ids of the parent’s resources that hold state, an address or a subscription', () => {
    // From the template of the stack named Test before the split (front door on).
    const before: Record<string, string> = {
      TableCD117FA1: 'AWS::DynamoDB::Table',
      ContentBucketDD05A3B9: 'AWS::S3::Bucket',
      ContentBucketPolicy8E6EA0B9: 'AWS::S3::BucketPolicy',
      SendQueue1F034DCA: 'AWS::SQS::Queue',
      SendQueuePolicy9E99BDAF: 'AWS::SQS::QueuePolicy',
      SendDeadLetterQueue75EE196E: 'AWS::SQS::Queue',
      SendDeadLetterQueuePolicy672C0163: 'AWS::SQS::QueuePolicy',
      SesEventsQueueF9CC1F5C: 'AWS::SQS::Queue',
      SesEventsQueuePolicy9566CAE4: 'AWS::SQS::QueuePolicy',
      SesEventsDeadLetterQueueA25A86A6: 'AWS::SQS::Queue',
      SesEventsDeadLetterQueuePolicy1F421A2F: 'AWS::SQS::QueuePolicy',
      WebhooksQueueCBC86013: 'AWS::SQS::Queue',
      WebhooksQueuePolicy7E261873: 'AWS::SQS::QueuePolicy',
      WebhooksDeadLetterQueue1C65998B: 'AWS::SQS::Queue',
      WebhooksDeadLetterQueuePolicyF2D9BC4B: 'AWS::SQS::QueuePolicy',
      // Added since: the request-log writer's failure destination and its dead-letter queue.
      RequestLogsRetryQueue09B27D77: 'AWS::SQS::Queue',
      RequestLogsRetryQueuePolicy6DFBAB4B: 'AWS::SQS::QueuePolicy',
      RequestLogsDeadLetterQueue8B74736A: 'AWS::SQS::Queue',
      RequestLogsDeadLetterQueuePolicyAC81A7EF: 'AWS::SQS::QueuePolicy',
      // And receiving's (in a Region where SES receives): its failure destination, the rule
      // writer's queue and its dead-letter queue.
      ReceivingFailedReceipts69AABCEC: 'AWS::SQS::Queue',
      ReceivingFailedReceiptsPolicyD6BB847A: 'AWS::SQS::QueuePolicy',
      ReceivingRuleQueueC477E5DA: 'AWS::SQS::Queue',
      ReceivingRuleQueuePolicyB9A6487F: 'AWS::SQS::QueuePolicy',
      ReceivingRuleDeadLetterQueue809A277E: 'AWS::SQS::Queue',
      ReceivingRuleDeadLetterQueuePolicyB07645E2: 'AWS::SQS::QueuePolicy',
      SesEventsTopic6E3F217C: 'AWS::SNS::Topic',
      SesEventsTopicPolicy42FBDD9F: 'AWS::SNS::TopicPolicy',
      SesEventsQueueTestSesEventsTopicD74C4ABE35C1DCCD: 'AWS::SNS::Subscription',
      ConfigurationSet3DD38186: 'AWS::SES::ConfigurationSet',
      ConfigurationSetToSnsDBE56006: 'AWS::SES::ConfigurationSetEventDestination',
      ApiF70053CD: 'AWS::ApiGatewayV2::Api',
      DefaultStageEE28A986: 'AWS::ApiGatewayV2::Stage',
      ApiAccessLogsE9DF007D: 'AWS::Logs::LogGroup',
      MonitoringAlarmTopicAF62D4F1: 'AWS::SNS::Topic',
      MonitoringAlarmTopicPolicyCB9CCFB0: 'AWS::SNS::TopicPolicy',
      MonitoringDashboard0C3675C6: 'AWS::CloudWatch::Dashboard',
      // Added since: the unsubscribe links' keys (issue 40): a new secret would void every link sent.
      UnsubscribeKeysSecretF85A43B9: 'AWS::SecretsManager::Secret',
      FrontDoorOriginSecret617BD22F: 'AWS::SecretsManager::Secret',
      FrontDoorFirewallWebAcl01199C70: 'AWS::WAFv2::WebACL',
      FrontDoorDistribution20F29BA2: 'AWS::CloudFront::Distribution',
    };
    for (const [id, type] of Object.entries(before)) expect(parent[id]?.Type, id).toBe(type);
    // And there are no others of these types, in any template, that might take their place (the
    // log groups: see below).
    // Made since the split, so with nothing to keep: the audience's queues and their policies, and
    // the broadcasts' (issue 41: the fan-out queue, and the lane beside the send queue).
    const resources = Object.entries(template.toJSON().Resources as Record<string, Json>).filter(
      ([id]) => !id.startsWith('Audience') && !id.startsWith('Broadcasts') && !id.startsWith('SendLane'),
    );
    for (const type of new Set(Object.values(before)))
      if (type !== 'AWS::Logs::LogGroup')
        expect(
          resources
            .filter(([, r]) => r.Type === type)
            .map(([id]) => id)
            .sort(),
          type,
        ).toEqual(
          Object.entries(before)
            .filter(([, t]) => t === type)
            .map(([id]) => id)
            .sort(),
        );
  });

  it('keeps every function’s log group, with its logs, in the parent under its id of before', () => {
    // From the template before the split: the log group each function wrote to.
    const before: Record<string, string> = {
      'send-email': 'SendEmailLogs21EB7BC6',
      'send-batch': 'HttpsendbatchLogsCBC96842',
      'list-emails': 'ListEmailsLogs5269D442',
      'get-email-metrics': 'HttpgetemailmetricsLogs9E9A72F9',
      'get-email': 'GetEmailLogs8866923F',
      'update-email': 'HttpupdateemailLogsAF5B5CA5',
      'cancel-email': 'HttpcancelemailLogs001411F6',
      'list-attachments': 'HttplistattachmentsLogs2779C5FB',
      'get-attachment': 'HttpgetattachmentLogs033F7C03',
      'create-domain': 'CreateDomainLogs590F05BB',
      'list-domains': 'ListDomainsLogsD6A42EF9',
      'get-domain': 'GetDomainLogs8685125E',
      'verify-domain': 'VerifyDomainLogs8D945E8F',
      'update-domain': 'HttpupdatedomainLogs0C1B4472',
      'delete-domain': 'DeleteDomainLogs36D44FA4',
      'create-template': 'HttpcreatetemplateLogs7A5CC7FB',
      'list-templates': 'HttplisttemplatesLogs51416C1C',
      'get-template': 'HttpgettemplateLogs4465F5CD',
      'update-template': 'HttpupdatetemplateLogsC2BE15D9',
      'delete-template': 'HttpdeletetemplateLogsA24C854D',
      'publish-template': 'HttppublishtemplateLogs389CF8C7',
      'duplicate-template': 'HttpduplicatetemplateLogs66A44497',
      'create-api-key': 'CreateApiKeyLogs8F575FA7',
      'list-api-keys': 'ListApiKeysLogs69208400',
      'update-api-key': 'HttpupdateapikeyLogsC1413A4E',
      'delete-api-key': 'DeleteApiKeyLogs10812224',
      'add-suppression': 'HttpaddsuppressionLogs6E144A9F',
      'batch-add-suppressions': 'HttpbatchaddsuppressionsLogsC1F6CC01',
      'list-suppressions': 'HttplistsuppressionsLogs1ED41696',
      'get-suppression': 'HttpgetsuppressionLogs6FA8388D',
      'delete-suppression': 'HttpdeletesuppressionLogs960C5914',
      'batch-remove-suppressions': 'HttpbatchremovesuppressionsLogsB369F2BD',
      'create-webhook': 'HttpcreatewebhookLogs717DF2E4',
      'list-webhooks': 'HttplistwebhooksLogs2B71C7D9',
      'get-webhook': 'HttpgetwebhookLogs09698196',
      'update-webhook': 'HttpupdatewebhookLogs8ACB5435',
      'delete-webhook': 'HttpdeletewebhookLogs4F6A3277',
      'rotate-webhook-secret': 'HttprotatewebhooksecretLogs30F4F412',
      'list-webhook-events': 'HttplistwebhookeventsLogs2A124C5C',
      'get-webhook-event': 'HttpgetwebhookeventLogsC7E0240D',
      'list-webhook-attempts': 'HttplistwebhookattemptsLogs0A9FDBB7',
      'replay-webhook-event': 'HttpreplaywebhookeventLogs2B035145',
      'get-openapi': 'HttpgetopenapiLogs2D9CB4B6',
      'get-api-reference': 'HttpgetapireferenceLogs3D5E9153',
      'get-console': 'HttpgetconsoleLogs392FE7DA',
      'get-console-asset': 'HttpgetconsoleassetLogs2BB41FB5',
      'list-logs': 'HttplistlogsLogs84C9CA58',
      'get-log': 'HttpgetlogLogs7D0D12CC',
      'route-not-found': 'RouteNotFoundLogsE02AD86E',
      'process-send-queue': 'ProcessSendQueueLogsB4CFE8CA',
      'process-ses-events': 'ProcessSesEventsLogs8719A306',
      'check-domains': 'CheckDomainsLogs6C725BC0',
      'deliver-webhooks': 'WebhooksDeliveryLogs499438E5',
      'sweep-emails': 'SweepEmailsLogs695C0977',
      'write-request-logs': 'RequestLogsWriterLogs44C031C0',
    };
    // The scheduled jobs split from the sweeper since are new: their log groups are new too; so
    // are receiving's functions, and the share link's (issue 39).
    const added = [
      'dispatch-scheduled',
      'requeue-webhook-retries',
      'roll-up-metrics',
      ...Object.keys(FUNCTIONS).filter((name) => conceptOf(name) === 'receiving'),
      'share-email',
      'get-shared-email',
      // Usage (issue 39).
      'get-usage',
      // The audience's, the imports' and the unsubscribe links' (issue 40).
      ...Object.keys(FUNCTIONS).filter((name) => ['contacts', 'audiences'].includes(conceptOf(name))),
      // The broadcasts' (issue 41).
      ...Object.keys(FUNCTIONS).filter((name) => conceptOf(name) === 'broadcasts'),
    ];
    expect([...Object.keys(before), ...added].sort()).toEqual(Object.keys(FUNCTIONS).sort());
    const resources = template.toJSON().Resources as Record<string, Json>;
    for (const [name, id] of Object.entries(before)) {
      expect(parent[id]?.Type, name).toBe('AWS::Logs::LogGroup');
      const fn = resources[logicalId(stack, stack.functions[name] as never)] as Json;
      expect(fn.Properties.LoggingConfig, name).toEqual({ LogGroup: { Ref: id } });
    }
    for (const name of added) {
      const fn = resources[logicalId(stack, stack.functions[name] as never)] as Json;
      const id = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(parent[id]?.Type, name).toBe('AWS::Logs::LogGroup');
    }
    // The functions', the access log and the front door's authorizer's: no other log group.
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::Logs::LogGroup')).toHaveLength(
      Object.keys(before).length + added.length + 2,
    );
  });

  it('keeps every route in the parent under its id of before: a route key exists once per API', () => {
    const before: Record<string, string> = {
      $default: 'ApiDefaultRoute1D83B0D8',
      'POST /v1/emails': 'ApiPOSTv1emails63FDE981',
      'POST /v1/emails/batch': 'ApiPOSTv1emailsbatchC90C8DC4',
      'GET /v1/emails': 'ApiGETv1emailsC877B8E8',
      'GET /v1/emails/metrics': 'ApiGETv1emailsmetrics677172EE',
      'GET /v1/emails/{id}': 'ApiGETv1emailsid3D431964',
      'PATCH /v1/emails/{id}': 'ApiPATCHv1emailsid0908BE01',
      'POST /v1/emails/{id}/cancel': 'ApiPOSTv1emailsidcancel5ECC8320',
      'GET /v1/emails/{id}/attachments': 'ApiGETv1emailsidattachments18A9FE77',
      'GET /v1/emails/{id}/attachments/{attachment_id}': 'ApiGETv1emailsidattachmentsattachmentidF17F4FEF',
      'POST /v1/domains': 'ApiPOSTv1domainsCDA2A108',
      'GET /v1/domains': 'ApiGETv1domainsA8B949A6',
      'GET /v1/domains/{id}': 'ApiGETv1domainsid81A80424',
      'POST /v1/domains/{id}/verify': 'ApiPOSTv1domainsidverify50A5029B',
      'PATCH /v1/domains/{id}': 'ApiPATCHv1domainsidC1AD6AC4',
      'DELETE /v1/domains/{id}': 'ApiDELETEv1domainsid92D9AC84',
      'POST /v1/templates': 'ApiPOSTv1templates2F2BA9F4',
      'GET /v1/templates': 'ApiGETv1templates2C3949AD',
      'GET /v1/templates/{id}': 'ApiGETv1templatesidCB1A6836',
      'PATCH /v1/templates/{id}': 'ApiPATCHv1templatesid951C24B3',
      'DELETE /v1/templates/{id}': 'ApiDELETEv1templatesidABEE5A7A',
      'POST /v1/templates/{id}/publish': 'ApiPOSTv1templatesidpublish6D62182C',
      'POST /v1/templates/{id}/duplicate': 'ApiPOSTv1templatesidduplicate949E529D',
      'POST /v1/api-keys': 'ApiPOSTv1apikeys27DB6B34',
      'GET /v1/api-keys': 'ApiGETv1apikeys26AAFE48',
      'PATCH /v1/api-keys/{id}': 'ApiPATCHv1apikeysidE83EB34B',
      'DELETE /v1/api-keys/{id}': 'ApiDELETEv1apikeysid9824EC68',
      'POST /v1/suppressions': 'ApiPOSTv1suppressions074B84F0',
      'GET /v1/suppressions': 'ApiGETv1suppressions78018370',
      'GET /v1/suppressions/{id}': 'ApiGETv1suppressionsid630106B6',
      'DELETE /v1/suppressions/{id}': 'ApiDELETEv1suppressionsidAB382064',
      'POST /v1/suppressions/batch/add': 'ApiPOSTv1suppressionsbatchaddD1F5DE53',
      'POST /v1/suppressions/batch/remove': 'ApiPOSTv1suppressionsbatchremove1E371863',
      'POST /v1/webhooks': 'ApiPOSTv1webhooks854B664E',
      'GET /v1/webhooks': 'ApiGETv1webhooksA02C2906',
      'GET /v1/webhooks/{id}': 'ApiGETv1webhooksid6EEB6C21',
      'PATCH /v1/webhooks/{id}': 'ApiPATCHv1webhooksid6505AF0C',
      'DELETE /v1/webhooks/{id}': 'ApiDELETEv1webhooksidFF4B1193',
      'POST /v1/webhooks/{id}/signing-secret/rotate': 'ApiPOSTv1webhooksidsigningsecretrotate29A91ABC',
      'GET /v1/webhooks/{id}/events': 'ApiGETv1webhooksideventsF5ECB6E3',
      'GET /v1/webhooks/{id}/events/{event_id}': 'ApiGETv1webhooksideventseventid08EAA710',
      'GET /v1/webhooks/{id}/events/{event_id}/attempts': 'ApiGETv1webhooksideventseventidattemptsA51519CD',
      'POST /v1/webhooks/{id}/events/{event_id}/replay': 'ApiPOSTv1webhooksideventseventidreplayBC1B0E44',
      'GET /v1/logs': 'ApiGETv1logs7212DCB5',
      'GET /v1/logs/{id}': 'ApiGETv1logsidA3A387E7',
      'GET /v1/openapi.json': 'ApiGETv1openapijson1BD61EE2',
      'GET /docs': 'ApiGETdocsCFAB0A79',
      'GET /': 'ApiGET41627D7E',
      'GET /assets/{file}': 'ApiGETassetsfileF98B852D',
      // Added since: receiving's routes (issue 38).
      'GET /v1/emails/receiving': 'ApiGETv1emailsreceiving33DF1FA4',
      'GET /v1/emails/receiving/{id}': 'ApiGETv1emailsreceivingid8F912252',
      'GET /v1/emails/receiving/{id}/attachments': 'ApiGETv1emailsreceivingidattachmentsB73F63BF',
      'GET /v1/emails/receiving/{id}/attachments/{attachment_id}':
        'ApiGETv1emailsreceivingidattachmentsattachmentidAFE42E7C',
      // Added since: HEAD on the public pages (routes.ts HEAD_ROUTES), each beside its GET.
      'HEAD /v1/openapi.json': 'ApiHEADv1openapijsonABF156A7',
      'HEAD /docs': 'ApiHEADdocs2198EAE5',
      'HEAD /': 'ApiHEAD0275FB28',
      'HEAD /assets/{file}': 'ApiHEADassetsfile87531C2D',
      // And the share link's (issue 39).
      'POST /v1/emails/{id}/share': 'ApiPOSTv1emailsidshare15BEA562',
      'GET /share/{token}': 'ApiGETsharetokenCD5D0EC1',
      // Added since: usage (issue 39).
      'GET /v1/usage': 'ApiGETv1usageC16A8A91', // Added since: the audience's routes and the unsubscribe pages (issue 40).
      'DELETE /v1/audiences/{id}': 'ApiDELETEv1audiencesidC264850A',
      'DELETE /v1/audiences/{id}/contacts/{contact_id}': 'ApiDELETEv1audiencesidcontactscontactid2EA93095',
      'DELETE /v1/contact-properties/{id}': 'ApiDELETEv1contactpropertiesid7D1A271A',
      'DELETE /v1/contacts/{id}': 'ApiDELETEv1contactsidBBC19372',
      'DELETE /v1/contacts/{id}/segments/{segment_id}': 'ApiDELETEv1contactsidsegmentssegmentidA151ACEF',
      'DELETE /v1/segments/{id}': 'ApiDELETEv1segmentsid27299FF3',
      'DELETE /v1/topics/{id}': 'ApiDELETEv1topicsid05C328E7',
      'GET /unsubscribe/{token}': 'ApiGETunsubscribetoken4BA18AC3',
      'GET /v1/audiences': 'ApiGETv1audiencesAF8531FD',
      'GET /v1/audiences/{id}': 'ApiGETv1audiencesid317F4B9E',
      'GET /v1/audiences/{id}/contacts': 'ApiGETv1audiencesidcontacts1DB657CB',
      'GET /v1/audiences/{id}/contacts/{contact_id}': 'ApiGETv1audiencesidcontactscontactid33387CE8',
      'GET /v1/contact-properties': 'ApiGETv1contactproperties3EBA7B90',
      'GET /v1/contact-properties/{id}': 'ApiGETv1contactpropertiesidF3ACA1B8',
      'GET /v1/contacts': 'ApiGETv1contactsB19E0B99',
      'GET /v1/contacts/imports': 'ApiGETv1contactsimportsAFA9585C',
      'GET /v1/contacts/imports/{id}': 'ApiGETv1contactsimportsid04272FC4',
      'GET /v1/contacts/{id}': 'ApiGETv1contactsidBC3F6BBE',
      'GET /v1/contacts/{id}/segments': 'ApiGETv1contactsidsegments0101DA38',
      'GET /v1/contacts/{id}/topics': 'ApiGETv1contactsidtopics59624064',
      'GET /v1/segments': 'ApiGETv1segmentsB8942B93',
      'GET /v1/segments/{id}': 'ApiGETv1segmentsidBC4F4D25',
      'GET /v1/segments/{id}/contacts': 'ApiGETv1segmentsidcontacts68878403',
      'GET /v1/topics': 'ApiGETv1topicsE1F301DA',
      'GET /v1/topics/{id}': 'ApiGETv1topicsidAE4FFD48',
      'PATCH /v1/audiences/{id}/contacts/{contact_id}': 'ApiPATCHv1audiencesidcontactscontactid1901178B',
      'PATCH /v1/contact-properties/{id}': 'ApiPATCHv1contactpropertiesid73F33D4E',
      'PATCH /v1/contacts/{id}': 'ApiPATCHv1contactsid5325C4B4',
      'PATCH /v1/contacts/{id}/topics': 'ApiPATCHv1contactsidtopics48F9D16F',
      'PATCH /v1/segments/{id}': 'ApiPATCHv1segmentsid0F7E8CCE',
      'PATCH /v1/topics/{id}': 'ApiPATCHv1topicsid5A15AF60',
      'POST /unsubscribe/{token}': 'ApiPOSTunsubscribetoken1BAAEF77',
      'POST /v1/audiences': 'ApiPOSTv1audiences91A88FEE',
      'POST /v1/audiences/{id}/contacts': 'ApiPOSTv1audiencesidcontacts4C112F6D',
      'POST /v1/contact-properties': 'ApiPOSTv1contactpropertiesACD80F22',
      'POST /v1/contacts': 'ApiPOSTv1contacts442231A7',
      'POST /v1/contacts/imports': 'ApiPOSTv1contactsimports1CE9F215',
      'POST /v1/contacts/imports/uploads': 'ApiPOSTv1contactsimportsuploads1DBB2EB3',
      'POST /v1/contacts/{id}/segments/{segment_id}': 'ApiPOSTv1contactsidsegmentssegmentidA5E0D16E',
      'POST /v1/segments': 'ApiPOSTv1segments3D81014D',
      'POST /v1/topics': 'ApiPOSTv1topicsBCA8E0CD',
      // Added since: the broadcasts' routes (issue 41).
      'POST /v1/broadcasts': 'ApiPOSTv1broadcastsCCD4DF57',
      'GET /v1/broadcasts': 'ApiGETv1broadcastsA3E3A714',
      'GET /v1/broadcasts/{id}': 'ApiGETv1broadcastsid65060FC0',
      'PATCH /v1/broadcasts/{id}': 'ApiPATCHv1broadcastsid6B0D8DAB',
      'DELETE /v1/broadcasts/{id}': 'ApiDELETEv1broadcastsidF30B0AC4',
      'POST /v1/broadcasts/{id}/send': 'ApiPOSTv1broadcastsidsendF1A361A7',
      'POST /v1/broadcasts/{id}/cancel': 'ApiPOSTv1broadcastsidcancel2C5E7B10',
      'POST /v1/broadcasts/{id}/duplicate': 'ApiPOSTv1broadcastsidduplicateF16AFEB1',
      'POST /v1/broadcasts/{id}/preview': 'ApiPOSTv1broadcastsidpreview851BEE44',
      'GET /v1/broadcasts/{id}/clicked-links': 'ApiGETv1broadcastsidclickedlinks11BC79D2',
      'GET /v1/broadcasts/{id}/recipients': 'ApiGETv1broadcastsidrecipients5A9F7675',
    };
    const routes = Object.entries(parent).filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Route');
    expect(Object.fromEntries(routes.map(([id, r]) => [r.Properties.RouteKey, id]))).toEqual(before);
  });
});
