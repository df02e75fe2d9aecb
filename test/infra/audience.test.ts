/**
 * The audience's infrastructure: its two queues (contact imports, audience clean-up) with their
 * dead-letter queues, alarms and consumers; the grants the new access fields give (a queue's
 * actions and URL, the unsubscribe keys read or rotated, through the secrets extension's layer);
 * the `imports/` prefix's lifecycle rule; and PUBLIC_ORIGIN, where unsubscribe links point.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionSpec } from '../../functions/catalog.js';
import { AUDIENCE_QUEUES } from '../../functions/shared/audience-queues.js';
import { IMPORT_RETENTION_DAYS } from '../../lib/constructs/content-bucket.js';
import { ServiceFunction } from '../../lib/constructs/service-function.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { FRONT_DOOR_ORIGIN, logicalId, resourcesOf, synthStack } from '../support/template.js';

type Statement = { Action: string | string[]; Resource: unknown; Effect?: string };

/** A bare stack with a table, two queues and a secret: what the access fields are granted on. */
function bareStack() {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Bare', { env: { account: '123456789012', region: 'eu-west-1' } });
  const table = new Table(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
  const contactImportQueue = new Queue(stack, 'Imports');
  const audienceCleanupQueue = new Queue(stack, 'Cleanup');
  const unsubscribeKeys = new Secret(stack, 'Keys');
  return {
    stack,
    resources: { table, settings: {}, contactImportQueue, audienceCleanupQueue, unsubscribeKeys },
  };
}

/** A function with an access no function of the catalog declares yet (its code: any handler's). */
const withAccess = (access: Partial<FunctionSpec>): FunctionSpec => ({
  description: 'a function with the audience access fields',
  env: ['TABLE_NAME'],
  table: { actions: ['GetItem'] },
  ...access,
});

const statementsOf = (template: Template, stack: Stack, fn: ServiceFunction): Statement[] => {
  const roleId = logicalId(stack, fn.role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
    .filter((s) => ![s.Action].flat().some((a) => a.startsWith('logs:') || a.startsWith('dynamodb:')));
};

const variablesOf = (template: Template, stack: Stack, fn: ServiceFunction) =>
  (template.toJSON().Resources[logicalId(stack, fn.function)].Properties.Environment?.Variables ??
    {}) as Record<string, unknown>;

describe('the audience access fields, granted by ServiceFunction.bind', () => {
  // The first synth loads CDK's modules: in the hook's time, not the first test's.
  beforeAll(() => {
    Template.fromStack(bareStack().stack);
  });

  it('gives exactly the declared actions on each queue, with its URL, and GetSecretValue on the keys through the extension', () => {
    const { stack, resources } = bareStack();
    const fn = new ServiceFunction(stack, 'Fn', {
      name: 'check-domains',
      spec: withAccess({
        env: [
          'TABLE_NAME',
          'CONTACT_IMPORT_QUEUE_URL',
          'AUDIENCE_CLEANUP_QUEUE_URL',
          'UNSUBSCRIBE_KEYS_SECRET',
        ],
        contactImportQueue: ['SendMessage'],
        audienceCleanupQueue: ['SendMessage', 'GetQueueAttributes'],
        unsubscribeKeys: 'read',
      }),
    }).bind(resources);
    const template = Template.fromStack(stack);
    const arn = (construct: Queue | Secret) =>
      construct instanceof Queue
        ? { 'Fn::GetAtt': [logicalId(stack, construct), 'Arn'] }
        : { Ref: logicalId(stack, construct) };
    expect(statementsOf(template, stack, fn)).toEqual([
      { Action: 'sqs:SendMessage', Effect: 'Allow', Resource: arn(resources.contactImportQueue) },
      {
        Action: ['sqs:SendMessage', 'sqs:GetQueueAttributes'],
        Effect: 'Allow',
        Resource: arn(resources.audienceCleanupQueue),
      },
      { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: arn(resources.unsubscribeKeys) },
    ]);
    const variables = variablesOf(template, stack, fn);
    expect(variables).toMatchObject({
      CONTACT_IMPORT_QUEUE_URL: { Ref: logicalId(stack, resources.contactImportQueue) },
      AUDIENCE_CLEANUP_QUEUE_URL: { Ref: logicalId(stack, resources.audienceCleanupQueue) },
      // The secret's ARN: its value is read at run time, never put in the environment.
      UNSUBSCRIBE_KEYS_SECRET: { Ref: logicalId(stack, resources.unsubscribeKeys) },
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
    });
    const layers = template.toJSON().Resources[logicalId(stack, fn.function)].Properties.Layers;
    expect(JSON.stringify(layers)).toContain('AWS-Parameters-and-Secrets-Lambda-Extension-Arm64');
  });

  it('gives the rotating function GetSecretValue and PutSecretValue on the keys alone, and no layer', () => {
    const { stack, resources } = bareStack();
    const fn = new ServiceFunction(stack, 'Rotate', {
      name: 'check-domains',
      spec: withAccess({ unsubscribeKeys: 'rotate' }),
    }).bind(resources);
    const template = Template.fromStack(stack);
    expect(statementsOf(template, stack, fn)).toEqual([
      {
        Action: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'],
        Effect: 'Allow',
        Resource: { Ref: logicalId(stack, resources.unsubscribeKeys) },
      },
    ]);
    expect(variablesOf(template, stack, fn)).not.toHaveProperty('UNSUBSCRIBE_KEYS_SECRET');
    expect(template.toJSON().Resources[logicalId(stack, fn.function)].Properties.Layers).toBeUndefined();
  });

  it('grants nothing of the audience to a function that declares none of it', () => {
    const { stack, resources } = bareStack();
    const fn = new ServiceFunction(stack, 'Plain', { name: 'check-domains', spec: withAccess({}) }).bind(
      resources,
    );
    const template = Template.fromStack(stack);
    expect(statementsOf(template, stack, fn)).toEqual([]);
    expect(Object.keys(variablesOf(template, stack, fn)).filter((k) => !k.startsWith('POWERTOOLS_'))).toEqual(
      ['TABLE_NAME'],
    );
  });

  it('fails the synth when a declared queue or the keys are not given', () => {
    const { stack, resources } = bareStack();
    const { contactImportQueue: _, ...withoutImports } = resources;
    expect(() =>
      new ServiceFunction(stack, 'Needs', {
        name: 'check-domains',
        spec: withAccess({
          env: ['TABLE_NAME', 'CONTACT_IMPORT_QUEUE_URL'],
          contactImportQueue: ['SendMessage'],
        }),
      }).bind(withoutImports),
    ).toThrow("needs the contact imports' queue");
    const { unsubscribeKeys: __, ...withoutKeys } = resources;
    expect(() =>
      new ServiceFunction(stack, 'NeedsKeys', {
        name: 'check-domains',
        spec: withAccess({ unsubscribeKeys: 'read' }),
      }).bind(withoutKeys),
    ).toThrow("needs the unsubscribe links' keys");
  });
});

describe('the stack: the audience queues, their consumers and the imports prefix', () => {
  let stack: EmailServiceStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthStack());
  });

  it('has each queue redrive to its own dead-letter queue after its receives, hidden six times its worker’s timeout', () => {
    const resources = template.toJSON().Resources;
    for (const [queue, deadLetters, settings] of [
      [stack.audience.importQueue, stack.audience.importDeadLetterQueue, AUDIENCE_QUEUES.contactImports],
      [stack.audience.cleanupQueue, stack.audience.cleanupDeadLetterQueue, AUDIENCE_QUEUES.audienceCleanup],
    ] as const) {
      const properties = resources[logicalId(stack, queue)].Properties;
      expect(properties).toMatchObject({
        VisibilityTimeout: settings.timeoutSeconds * 6,
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, deadLetters), 'Arn'] },
          maxReceiveCount: settings.maxReceiveCount,
        },
      });
      expect(resources[logicalId(stack, deadLetters)].Properties.MessageRetentionPeriod).toBe(14 * 86_400);
    }
  });

  it('alarms when a step lands in either dead-letter queue', () => {
    const alarms = Object.keys(resourcesOf(template, 'AWS::CloudWatch::Alarm'));
    for (const name of ['ContactImportDeadLetters', 'AudienceCleanupDeadLetters'])
      expect(
        alarms.some((id) => id.includes(name)),
        name,
      ).toBe(true);
  });

  it('has each declared worker consume its queue one message at a time, reporting failed items, within its concurrency', () => {
    const mappings = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping'));
    const declared = Object.values(AUDIENCE_QUEUES).filter((q) => q.worker in FUNCTIONS);
    expect(stack.audience.workers.map((w) => w.name).sort()).toEqual(declared.map((q) => q.worker).sort());
    for (const settings of declared) {
      const queue =
        settings.worker === 'import-contacts' ? stack.audience.importQueue : stack.audience.cleanupQueue;
      const fn = stack.functions[settings.worker];
      if (!fn) throw new Error(`${settings.worker} is not in the stack`);
      const mapping = mappings.find(
        (m) =>
          JSON.stringify(m.Properties.EventSourceArn) ===
          JSON.stringify({ 'Fn::GetAtt': [logicalId(stack, queue), 'Arn'] }),
      );
      expect(mapping?.Properties, settings.worker).toMatchObject({
        BatchSize: settings.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: settings.maxConcurrency },
      });
      expect(template.toJSON().Resources[logicalId(stack, fn)].Properties.Timeout).toBe(
        settings.timeoutSeconds,
      );
    }
  });

  it('expires contact imports’ files under imports/ after a week, by a rule of their own', () => {
    const bucket = template.toJSON().Resources[logicalId(stack, stack.content.bucket)];
    expect(bucket.Properties.LifecycleConfiguration.Rules).toContainEqual({
      Id: 'expire-imports',
      Prefix: 'imports/',
      ExpirationInDays: IMPORT_RETENTION_DAYS,
      Status: 'Enabled',
    });
  });
});

describe('PUBLIC_ORIGIN: where unsubscribe links point', () => {
  const readers = Object.entries(FUNCTIONS as Record<string, FunctionSpec>)
    .filter(([, spec]) => spec.env.includes('PUBLIC_ORIGIN'))
    .map(([name]) => name);
  const originOf = (stack: EmailServiceStack, template: Template, name: string) => {
    const fn = stack.functions[name];
    if (!fn) throw new Error(`no function ${name}`);
    return template.toJSON().Resources[logicalId(stack, fn)].Properties.Environment.Variables.PUBLIC_ORIGIN;
  };

  it("is the API's own URL without the front door", () => {
    const { stack, template } = synthStack();
    const api = logicalId(stack, stack.api.api);
    // An HTTP API's ApiEndpoint attribute is its https origin, `https://{id}.execute-api.{region}.amazonaws.com`
    // (AWS::ApiGatewayV2::Api return values); its Ref is only the API's id, no origin.
    for (const name of readers)
      expect(originOf(stack, template, name), name).toEqual({ 'Fn::GetAtt': [api, 'ApiEndpoint'] });
  });

  it("is the front door's host with it, never the closed API's", () => {
    const { stack, template } = synthStack({ frontDoor: { ...FRONT_DOOR_ORIGIN } });
    const distribution = logicalId(stack, stack.frontDoor?.distribution as never);
    for (const name of readers)
      expect(originOf(stack, template, name), name).toEqual({
        'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distribution, 'DomainName'] }]],
      });
  });

  it('is set on no function that does not read it', () => {
    const { stack, template } = synthStack();
    for (const [name, fn] of Object.entries(stack.functions)) {
      const variables =
        template.toJSON().Resources[logicalId(stack, fn)].Properties.Environment?.Variables ?? {};
      expect('PUBLIC_ORIGIN' in variables, name).toBe(readers.includes(name));
    }
  });
});
