/**
 * The optional front door: off by default; when on, CloudFront with the firewall's web ACL (a rate
 * limit per client address, answering in the API's error shape) in front of the API, which is then
 * closed behind it: no execute-api endpoint, a custom domain as CloudFront's origin, and every
 * route behind an authorizer that passes only CloudFront's secret header, which no function holds
 * in its environment. Outside us-east-1 the web ACL lives in a companion stack.
 */
import { App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULED_FUNCTIONS } from '../../functions/catalog.js';
import { FRONT_DOOR_CACHE_SECONDS, FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';
import { buildApp } from '../../lib/app.js';
import { FrontDoorFirewall } from '../../lib/constructs/front-door.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import {
  FRONT_DOOR_ORIGIN,
  logicalId,
  resourcesOf,
  type Statement,
  synthStack,
  templateOf,
} from '../support/template.js';

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
const BACKGROUND = ['process-send-queue', 'process-ses-events', ...SCHEDULED_FUNCTIONS];
/** The settings that turn the front door on, as `-c` gives them. */
const FRONT_DOOR_CONTEXT = {
  frontDoor: 'true',
  frontDoorDomain: FRONT_DOOR_ORIGIN.originDomainName,
  frontDoorCertificateArn: FRONT_DOOR_ORIGIN.originCertificateArn,
};

describe('the front door, off (the default)', () => {
  let stack: EmailServiceStack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synthStack());
  });

  it('adds nothing: no distribution, no web ACL, no secret, no authorizer or custom domain; the API is reached at its execute-api URL', () => {
    for (const type of [
      'AWS::CloudFront::Distribution',
      'AWS::WAFv2::WebACL',
      'AWS::ApiGatewayV2::Authorizer',
      'AWS::ApiGatewayV2::DomainName',
    ])
      template.resourceCountIs(type, 0);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      DisableExecuteApiEndpoint: Match.absent(),
    });
    for (const route of Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route')))
      expect(route.Properties.AuthorizationType).toBe('NONE');
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
    ({ stack, template } = synthStack({ frontDoor: { requestsPerFiveMinutes: 1200, ...FRONT_DOOR_ORIGIN } }));
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

  it('serves the API through CloudFront: HTTPS only, nothing cached, every header but Host forwarded, with the web ACL, from the custom domain', () => {
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
            DomainName: FRONT_DOOR_ORIGIN.originDomainName,
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

  it("closes the API's own endpoint: execute-api disabled, served at the custom domain (the given certificate, TLS 1.2) on its stage", () => {
    const apiId = logicalId(stack, stack.api.api);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
    const domains = Object.entries(resourcesOf(template, 'AWS::ApiGatewayV2::DomainName'));
    expect(domains).toHaveLength(1);
    const [[domainId, domain] = []] = domains;
    expect(domain?.Properties).toEqual({
      DomainName: FRONT_DOOR_ORIGIN.originDomainName,
      DomainNameConfigurations: [
        {
          CertificateArn: FRONT_DOOR_ORIGIN.originCertificateArn,
          EndpointType: 'REGIONAL',
          SecurityPolicy: 'TLS_1_2',
        },
      ],
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', {
      ApiId: { Ref: apiId },
      DomainName: { Ref: domainId },
      Stage: '$default',
    });
    // Where the origin's DNS name must point.
    expect(template.toJSON().Outputs.FrontDoorOriginTarget.Value).toEqual({
      'Fn::GetAtt': [domainId, 'RegionalDomainName'],
    });
  });

  it('puts every route behind one Lambda authorizer: simple responses, the header as identity source, answers cached', () => {
    const authorizers = Object.entries(resourcesOf(template, 'AWS::ApiGatewayV2::Authorizer'));
    expect(authorizers).toHaveLength(1);
    const [[authorizerId, authorizer] = []] = authorizers;
    const fnId = logicalId(stack, stack.frontDoor?.authorizer as never);
    expect(authorizer?.Properties).toMatchObject({
      ApiId: { Ref: logicalId(stack, stack.api.api) },
      AuthorizerType: 'REQUEST',
      AuthorizerPayloadFormatVersion: '2.0',
      EnableSimpleResponses: true,
      IdentitySource: [`$request.header.${FRONT_DOOR_HEADER}`],
      AuthorizerResultTtlInSeconds: FRONT_DOOR_CACHE_SECONDS,
    });
    expect(JSON.stringify(authorizer?.Properties.AuthorizerUri)).toContain(`"${fnId}","Arn"`);
    const routes = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route'));
    expect(routes.length).toBe(stack.api.routes.size);
    expect(routes.map((r) => r.Properties.RouteKey)).toContain('$default');
    for (const route of routes)
      expect(route.Properties, String(route.Properties.RouteKey)).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
    // API Gateway may invoke it as this API's authorizer, and nothing else may.
    const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter((p) =>
      JSON.stringify(p.Properties.FunctionName).includes(fnId),
    );
    expect(permissions).toHaveLength(1);
    expect(permissions[0]?.Properties.Principal).toBe('apigateway.amazonaws.com');
    expect(JSON.stringify(permissions[0]?.Properties.SourceArn)).toContain(`/authorizers/`);
  });

  it('keeps the secret out of every function: CloudFront resolves it at deploy time; the authorizer reads it by ARN, granted GetSecretValue on it alone', () => {
    const [distribution] = Object.values(resourcesOf(template, 'AWS::CloudFront::Distribution'));
    if (!distribution) throw new Error('no distribution');
    const config = distribution.Properties.DistributionConfig as {
      Origins: { OriginCustomHeaders: { HeaderValue: unknown }[] }[];
    };
    const header = JSON.stringify(config.Origins[0]?.OriginCustomHeaders[0]?.HeaderValue);
    const secretId = logicalId(stack, stack.frontDoor?.secret as never);
    expect(header).toContain('{{resolve:secretsmanager:');
    expect(header).toContain(secretId);
    const functions = Object.entries(resourcesOf(template, 'AWS::Lambda::Function'));
    expect(functions.length).toBe(Object.keys(stack.functions).length + 1);
    for (const [id, fn] of functions) {
      const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      expect(Object.keys(variables ?? {}), id).not.toContain('FRONT_DOOR_SECRET');
      expect(JSON.stringify(variables ?? {}), id).not.toContain('resolve:secretsmanager');
    }
    for (const name of [...stack.api.functions.keys(), ...BACKGROUND])
      expect(variablesOf(template, stack, name), name).not.toHaveProperty('FRONT_DOOR_SECRET_ARN');
    const authorizerId = logicalId(stack, stack.frontDoor?.authorizer as never);
    const authorizer = template.toJSON().Resources[authorizerId];
    expect(authorizer.Properties.Environment.Variables).toMatchObject({
      FRONT_DOOR_SECRET_ARN: { Ref: secretId },
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
    });
    expect(JSON.stringify(authorizer.Properties.Layers)).toContain(
      'AWS-Parameters-and-Secrets-Lambda-Extension-Arm64',
    );
    const role = authorizer.Properties.Role['Fn::GetAtt'][0] as string;
    const statements = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const onSecrets = statements.filter((st) => JSON.stringify(st.Action).includes('secretsmanager:'));
    expect(onSecrets).toEqual([
      expect.objectContaining({
        Action: 'secretsmanager:GetSecretValue',
        Effect: 'Allow',
        Resource: { Ref: secretId },
      }),
    ]);
    // No other function may read it (the unsubscribe keys are another secret: unsubscribe-keys.test.ts).
    const readers = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.PolicyDocument).includes(`"Resource":{"Ref":"${secretId}"}`),
    );
    expect(readers).toHaveLength(1);
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ ExcludePunctuation: true, PasswordLength: 48 }),
    });
  });

  it('passes cdk-nag, each acknowledgement saying why', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...FRONT_DOOR_CONTEXT } });
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
        ...FRONT_DOOR_CONTEXT,
        frontDoorCertificateArn: FRONT_DOOR_ORIGIN.originCertificateArn.replace('us-east-1', 'eu-west-1'),
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
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...FRONT_DOOR_CONTEXT } });
    expect(() => buildApp(app, {})).toThrow(/needs the account and region known/);
    const elsewhere = new Stack(new App(), 'Elsewhere', { env: { region: 'eu-west-1' } });
    expect(() => new FrontDoorFirewall(elsewhere, 'Firewall')).toThrow(/lives in us-east-1/);
    const east = new Stack(new App(), 'East', { env: { region: 'us-east-1' } });
    expect(() => new FrontDoorFirewall(east, 'Firewall', { requestsPerFiveMinutes: 5 })).toThrow(
      /at least 10/,
    );
  });

  it('refuses the front door without its custom domain and certificate, saying what to give', () => {
    const east = { account: '123456789012', region: 'us-east-1' };
    const build = (context: Record<string, string>) => () =>
      buildApp(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), east);
    expect(build({ frontDoor: 'true' })).toThrow(
      /frontDoorDomain must be the host name.*frontDoorCertificateArn must be the ARN/,
    );
    expect(build({ ...FRONT_DOOR_CONTEXT, frontDoorDomain: 'https://api.example.com/' })).toThrow(
      /frontDoorDomain must be the host name/,
    );
    expect(build({ ...FRONT_DOOR_CONTEXT, frontDoorCertificateArn: 'my-certificate' })).toThrow(
      /frontDoorCertificateArn must be the ARN of an issued ACM certificate/,
    );
    expect(build(FRONT_DOOR_CONTEXT)).not.toThrow();
  });

  it('refuses a setting it cannot read', () => {
    const bad = (context: Record<string, string>) => () =>
      buildApp(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), {});
    expect(bad({ logLevel: 'LOUD' })).toThrow(/logLevel must be DEBUG, INFO, WARN or ERROR/);
    expect(bad({ sendConcurrency: 'ten' })).toThrow(/sendConcurrency must be a number/);
    expect(bad({ sesEventsConcurrency: 'many' })).toThrow(/sesEventsConcurrency must be a number/);
  });
});
