/**
 * The optional front door: off by default; when on, CloudFront with the firewall's web ACL (a rate
 * limit per client address, answering in the API's error shape) in front of the API, which then
 * refuses what did not come through it. Outside us-east-1 the web ACL lives in a companion stack.
 */
import { App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULED_FUNCTIONS } from '../../functions/catalog.js';
import { FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';
import { buildApp } from '../../lib/app.js';
import { FrontDoorFirewall } from '../../lib/constructs/front-door.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { logicalId, resourcesOf, synthStack, templateOf } from '../support/template.js';

const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

const variablesOf = (template: Template, stack: EmailServiceStack, name: string) => {
  const fn = stack.functions[name];
  if (!fn) throw new Error(`no function ${name}`);
  return (
    (template.toJSON().Resources[logicalId(stack, fn)].Properties.Environment?.Variables as Record<
      string,
      unknown
    >) ?? {}
  );
};
const API_FUNCTIONS = (stack: EmailServiceStack) => [...stack.api.functions.keys()];
const BACKGROUND = ['process-send-queue', 'process-ses-events', ...SCHEDULED_FUNCTIONS];

describe('the front door, off (the default)', () => {
  it('adds nothing: no distribution, no web ACL, no secret; the API is reached at its execute-api URL', () => {
    const { stack, template } = synthStack();
    for (const type of ['AWS::CloudFront::Distribution', 'AWS::WAFv2::WebACL', 'AWS::SecretsManager::Secret'])
      template.resourceCountIs(type, 0);
    for (const name of Object.keys(stack.functions))
      expect(variablesOf(template, stack, name)).not.toHaveProperty('FRONT_DOOR_SECRET');
    expect(JSON.stringify(template.toJSON().Outputs.ApiUrl.Value)).toContain(
      `{"Fn::GetAtt":["${logicalId(stack, stack.api.api)}","ApiEndpoint"]}`,
    );
  });
});

describe('the front door, on (us-east-1: one stack)', () => {
  let stack: EmailServiceStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthStack({ frontDoor: { requestsPerFiveMinutes: 1200 } }));
  });

  it('rate-limits each client address at the edge, answering 429 in the API’s error shape', () => {
    const [acl] = Object.values(resourcesOf(template, 'AWS::WAFv2::WebACL'));
    const props = acl?.Properties as Record<string, never>;
    expect(props.Scope).toBe('CLOUDFRONT');
    expect(props.DefaultAction).toEqual({ Allow: {} });
    expect(props.Rules).toEqual([
      expect.objectContaining({
        Name: 'PerClientAddress',
        Statement: { RateBasedStatement: { Limit: 1200, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
        Action: {
          Block: {
            CustomResponse: {
              ResponseCode: 429,
              CustomResponseBodyKey: 'rate_limited',
              ResponseHeaders: [{ Name: 'retry-after', Value: '60' }],
            },
          },
        },
      }),
    ]);
    const body = (
      props.CustomResponseBodies as unknown as Record<string, { Content: string; ContentType: string }>
    ).rate_limited;
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body?.Content ?? '')).toEqual({
      statusCode: 429,
      name: 'rate_limit_exceeded',
      message: expect.any(String),
    });
  });

  it('serves the API through CloudFront: HTTPS only, nothing cached, every header but Host forwarded, with the web ACL', () => {
    const acl = stack.node.findChild('FrontDoorFirewall').node.findChild('WebAcl') as CfnElement;
    const aclId = stack.resolve(acl.logicalId);
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        WebACLId: { 'Fn::GetAtt': [aclId, 'Arn'] },
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'https-only',
          CachePolicyId: CACHING_DISABLED,
          OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
          AllowedMethods: Match.arrayWith(['GET', 'PATCH', 'POST', 'DELETE']),
        }),
        Origins: [
          Match.objectLike({
            DomainName: {
              'Fn::Join': [
                '',
                [
                  { Ref: logicalId(stack, stack.api.api) },
                  '.execute-api.us-east-1.',
                  { Ref: 'AWS::URLSuffix' },
                ],
              ],
            },
            CustomOriginConfig: Match.objectLike({
              OriginProtocolPolicy: 'https-only',
              OriginSSLProtocols: ['TLSv1.2'],
            }),
            OriginCustomHeaders: [{ HeaderName: FRONT_DOOR_HEADER, HeaderValue: Match.anyValue() }],
          }),
        ],
      }),
    });
    expect(JSON.stringify(template.toJSON().Outputs.ApiUrl.Value)).toContain(
      logicalId(stack, stack.frontDoor?.distribution as never),
    );
  });

  it('gives CloudFront and every API function the same secret, resolved at deploy time (never in the template)', () => {
    const [distribution] = Object.values(resourcesOf(template, 'AWS::CloudFront::Distribution'));
    if (!distribution) throw new Error('no distribution');
    const config = distribution.Properties.DistributionConfig as {
      Origins: { OriginCustomHeaders: { HeaderValue: unknown }[] }[];
    };
    const header = JSON.stringify(config.Origins[0]?.OriginCustomHeaders[0]?.HeaderValue);
    expect(header).toContain('{{resolve:secretsmanager:');
    expect(header).toContain(logicalId(stack, stack.frontDoor?.secret as never));
    for (const name of API_FUNCTIONS(stack))
      expect(JSON.stringify(variablesOf(template, stack, name).FRONT_DOOR_SECRET), name).toBe(header);
    for (const name of BACKGROUND)
      expect(variablesOf(template, stack, name)).not.toHaveProperty('FRONT_DOOR_SECRET');
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ ExcludePunctuation: true, PasswordLength: 48 }),
    });
  });

  it('passes cdk-nag, each acknowledgement saying why', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], frontDoor: 'true' } });
    const { service } = buildApp(app, { account: '123456789012', region: 'us-east-1' });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
    expect(service.frontDoor).toBeDefined();
  });
});

describe('the front door, on, outside us-east-1 (bin/app.ts)', () => {
  it('puts the web ACL in a companion stack in us-east-1 and hands its ARN across regions', () => {
    const app = new App({
      context: {
        'aws:cdk:bundling-stacks': [],
        frontDoor: 'true',
        frontDoorRateLimit: '600',
        stackName: 'Mail',
      },
    });
    const { service, firewall } = buildApp(app, { account: '123456789012', region: 'eu-west-1' });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    const assembly = app.synth();
    expect(assembly.stacks.map((s) => [s.stackName, s.environment.region]).sort()).toEqual([
      ['Mail', 'eu-west-1'],
      ['MailFrontDoorFirewall', 'us-east-1'],
    ]);
    expect(firewall).toBeDefined();
    Template.fromStack(firewall as Stack).hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'CLOUDFRONT',
      Rules: [Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 600 }) } })],
    });
    const template = templateOf(service);
    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    // CDK's cross-region reference: read from SSM in us-east-1 by a custom resource at deploy time.
    const [distribution] = Object.values(resourcesOf(template, 'AWS::CloudFront::Distribution'));
    expect(JSON.stringify(distribution?.Properties)).toMatch(
      /"WebACLId":\{"Fn::GetAtt":\["ExportsReader[^"]*","\/cdk\/exports\//,
    );
  });

  it('refuses what cannot work: the front door without a known account and region, a web ACL outside us-east-1, a limit WAF refuses', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], frontDoor: 'true' } });
    expect(() => buildApp(app, {})).toThrow(/needs the account and region known/);
    const elsewhere = new Stack(new App(), 'Elsewhere', { env: { region: 'eu-west-1' } });
    expect(() => new FrontDoorFirewall(elsewhere, 'Firewall')).toThrow(/lives in us-east-1/);
    const east = new Stack(new App(), 'East', { env: { region: 'us-east-1' } });
    expect(() => new FrontDoorFirewall(east, 'Firewall', { requestsPerFiveMinutes: 5 })).toThrow(
      /at least 10/,
    );
  });

  it('refuses a setting it cannot read', () => {
    const bad = (context: Record<string, string>) => () =>
      buildApp(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), {});
    expect(bad({ logLevel: 'LOUD' })).toThrow(/logLevel must be DEBUG, INFO, WARN or ERROR/);
    expect(bad({ sendConcurrency: 'ten' })).toThrow(/sendConcurrency must be a number/);
    expect(bad({ sesEventsConcurrency: 'many' })).toThrow(/sesEventsConcurrency must be a number/);
  });
});
