/**
 * The opt-in SMTP relay on AWS (issue 42): off by default, and then nothing of it is synthesized;
 * on, ECS Fargate behind a Network Load Balancer: TLS listeners 465 and 2465 with the ACM
 * certificate to the secured port, TCP 587 and 2587 to the STARTTLS port when the tasks hold a
 * certificate, PROXY protocol v2, the tasks reachable only from the load balancer's security
 * group, a deploy's grace, the send path's grants, the request-log subscription and scaling.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTP_RELAY_SPEC } from '../../functions/smtp-relay/access.js';
import {
  CONTAINER_PORTS,
  DEREGISTRATION_DELAY_SECONDS,
  NLB_PORTS,
  RELAY_METRICS,
  STOP_TIMEOUT_SECONDS,
} from '../../functions/smtp-relay/settings.js';
import { buildApp } from '../../lib/app.js';
import { REQUEST_LOG_FILTER } from '../../lib/constructs/request-logs.js';
import {
  RELAY_MIN_TASKS,
  RELAY_TARGET_CONNECTIONS,
  type SmtpRelayOptions,
} from '../../lib/constructs/smtp-relay.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { RELAY_DOCKERFILE } from '../../lib/smtp-relay-image.js';
import {
  logicalId,
  policiesOf,
  type Resource,
  resourcesOf,
  type Statement,
  synthStack,
  templateOf,
} from '../support/template.js';

const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
const TLS_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:smtp-relay-tls-AbC123';
const RELAY: SmtpRelayOptions = {
  hostname: 'smtp.example.com',
  certificateArn: CERTIFICATE,
  tlsSecretArn: TLS_SECRET,
};

type Synth = { stack: EmailServiceStack; template: Template };
const synth = (relay?: SmtpRelayOptions): Synth => synthStack(relay ? { smtpRelay: relay } : {});
let withoutRelay: Synth | undefined;
/** The stack with the relay off (the default), synthesized once for the tests that compare with it. */
const off = (): Synth => {
  withoutRelay ??= synth();
  return withoutRelay;
};
const only = (template: Template, type: string): Resource => {
  const found = Object.values(resourcesOf(template, type));
  expect(found).toHaveLength(1);
  return found[0] as Resource;
};
const relayOf = (stack: EmailServiceStack) => {
  if (!stack.smtpRelay) throw new Error('the relay is off');
  return stack.smtpRelay;
};
const containerOf = (template: Template) =>
  (
    only(template, 'AWS::ECS::TaskDefinition').Properties.ContainerDefinitions as Record<string, unknown>[]
  )[0] as {
    Environment: { Name: string; Value: unknown }[];
    PortMappings: { ContainerPort: number }[];
    StopTimeout: number;
  };
const environmentOf = (template: Template) =>
  Object.fromEntries(containerOf(template).Environment.map((v) => [v.Name, v.Value]));
/** Each ingress rule of a security group (inline or its own resource), by port. */
const ingressOf = (template: Template, groupId: string) => [
  ...((resourcesOf(template, 'AWS::EC2::SecurityGroup')[groupId]?.Properties.SecurityGroupIngress ??
    []) as Record<string, unknown>[]),
  ...Object.values(resourcesOf(template, 'AWS::EC2::SecurityGroupIngress'))
    .map((rule) => rule.Properties)
    .filter((rule) => JSON.stringify(rule.GroupId).includes(`"${groupId}"`)),
];
/** The statements of a role's policies, by the role's logical id, without their Effect and order. */
const statementsOfRole = (template: Template, roleId: string) =>
  Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
const normalized = (statements: Statement[]) =>
  statements.map((s) => JSON.stringify({ Action: [s.Action].flat().sort(), Resource: s.Resource })).sort();

describe('the SMTP relay, off (the default)', () => {
  it('synthesizes none of it: no VPC, load balancer, ECS or scaling resource, no output', () => {
    const { stack, template } = off();
    expect(stack.smtpRelay).toBeUndefined();
    const types = new Set(
      Object.values(template.toJSON().Resources as Record<string, Resource>).map((r) => r.Type),
    );
    for (const type of types)
      expect(type).not.toMatch(/^AWS::(EC2|ECS|ElasticLoadBalancingV2|ApplicationAutoScaling)::/);
    expect(Object.keys(template.toJSON().Outputs)).not.toContain('SmtpRelayLoadBalancer');
  });
});

describe('the SMTP relay, on (public subnets, with a STARTTLS certificate)', () => {
  let on: Synth;
  beforeAll(() => {
    on = synth(RELAY);
  });

  it('listens on 465 and 2465 with TLS (the ACM certificate, a TLS 1.2+ policy) and on 587 and 2587 with TCP', () => {
    const listeners = Object.values(resourcesOf(on.template, 'AWS::ElasticLoadBalancingV2::Listener')).map(
      (l) => l.Properties,
    );
    const relay = relayOf(on.stack);
    const secured = logicalId(on.stack, relay.securedTargets);
    const startTls = logicalId(on.stack, relay.startTlsTargets as never);
    const byPort = Object.fromEntries(listeners.map((l) => [l.Port as number, l]));
    expect(
      Object.keys(byPort)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([465, 587, 2465, 2587]);
    for (const port of NLB_PORTS.implicitTls)
      expect(byPort[port]).toMatchObject({
        Protocol: 'TLS',
        Certificates: [{ CertificateArn: CERTIFICATE }],
        SslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
        DefaultActions: [{ Type: 'forward', TargetGroupArn: { Ref: secured } }],
      });
    for (const port of NLB_PORTS.starttls) {
      expect(byPort[port]).toMatchObject({
        Protocol: 'TCP',
        DefaultActions: [{ Type: 'forward', TargetGroupArn: { Ref: startTls } }],
      });
      expect(byPort[port]).not.toHaveProperty('Certificates');
    }
    on.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Type: 'network',
      Scheme: 'internet-facing',
      SecurityGroups: [{ 'Fn::GetAtt': [logicalId(on.stack, relay.loadBalancerSecurityGroup), 'GroupId'] }],
    });
  });

  it('sends PROXY protocol v2 to IP targets on the container ports, checks /health, and lets sessions drain', () => {
    const groups = Object.values(resourcesOf(on.template, 'AWS::ElasticLoadBalancingV2::TargetGroup'));
    expect(groups.map((g) => g.Properties.Port).sort()).toEqual([
      CONTAINER_PORTS.secured,
      CONTAINER_PORTS.starttls,
    ]);
    for (const { Properties: group } of groups) {
      expect(group).toMatchObject({
        Protocol: 'TCP',
        TargetType: 'ip',
        HealthCheckProtocol: 'HTTP',
        HealthCheckPort: String(CONTAINER_PORTS.health),
      });
      // The STARTTLS port's targets are healthy only while they hold the certificate.
      expect(group.HealthCheckPath).toBe(
        group.Port === CONTAINER_PORTS.starttls ? '/health/starttls' : '/health',
      );
      expect(group.TargetGroupAttributes).toEqual(
        expect.arrayContaining([
          { Key: 'proxy_protocol_v2.enabled', Value: 'true' },
          { Key: 'preserve_client_ip.enabled', Value: 'false' },
          { Key: 'deregistration_delay.timeout_seconds', Value: String(DEREGISTRATION_DELAY_SECONDS) },
        ]),
      );
    }
    const service = only(on.template, 'AWS::ECS::Service').Properties;
    expect((service.LoadBalancers as { ContainerPort: number }[]).map((l) => l.ContainerPort).sort()).toEqual(
      [CONTAINER_PORTS.secured, CONTAINER_PORTS.starttls],
    );
  });

  it('lets only the load balancer reach the tasks (the secured port above all), and the tasks only HTTPS out', () => {
    const relay = relayOf(on.stack);
    const nlbGroup = logicalId(on.stack, relay.loadBalancerSecurityGroup);
    const taskGroup = logicalId(on.stack, relay.taskSecurityGroup);
    const toTasks = ingressOf(on.template, taskGroup);
    expect(toTasks.map((rule) => rule.FromPort).sort()).toEqual(
      [CONTAINER_PORTS.secured, CONTAINER_PORTS.starttls, CONTAINER_PORTS.health].sort(),
    );
    for (const rule of toTasks) {
      expect(rule).not.toHaveProperty('CidrIp');
      expect(rule.SourceSecurityGroupId).toEqual({ 'Fn::GetAtt': [nlbGroup, 'GroupId'] });
      expect(rule.ToPort).toBe(rule.FromPort);
    }
    const fromAnywhere = ingressOf(on.template, nlbGroup);
    expect(fromAnywhere.map((rule) => [rule.CidrIp, rule.FromPort]).sort()).toEqual(
      [465, 587, 2465, 2587].map((port) => ['0.0.0.0/0', port]).sort(),
    );
    const taskEgress = resourcesOf(on.template, 'AWS::EC2::SecurityGroup')[taskGroup]?.Properties
      .SecurityGroupEgress;
    expect(taskEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', FromPort: 443, ToPort: 443 }),
    ]);
    on.template.resourceCountIs('AWS::EC2::NatGateway', 0);
    on.template.hasResourceProperties('AWS::ECS::Service', {
      NetworkConfiguration: {
        AwsvpcConfiguration: {
          AssignPublicIp: 'ENABLED',
          SecurityGroups: [{ 'Fn::GetAtt': [taskGroup, 'GroupId'] }],
        },
      },
    });
  });

  it("runs ARM64 Fargate tasks that stop within Fargate's most, two at least, replaced before they are stopped", () => {
    const container = containerOf(on.template);
    expect(container.StopTimeout).toBe(STOP_TIMEOUT_SECONDS);
    expect(STOP_TIMEOUT_SECONDS).toBeLessThanOrEqual(120);
    expect(container.PortMappings.map((p) => p.ContainerPort).sort()).toEqual(
      [CONTAINER_PORTS.secured, CONTAINER_PORTS.starttls, CONTAINER_PORTS.health].sort(),
    );
    on.template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
    });
    // No DesiredCount: a deploy would set a scaled-out service back to it; the scalable target's minimum holds instead.
    expect(only(on.template, 'AWS::ECS::Service').Properties).not.toHaveProperty('DesiredCount');
    on.template.hasResourceProperties('AWS::ECS::Service', {
      LaunchType: 'FARGATE',
      DeploymentConfiguration: Match.objectLike({
        MinimumHealthyPercent: 100,
        MaximumPercent: 200,
        DeploymentCircuitBreaker: { Enable: true, Rollback: true },
      }),
    });
  });

  it("gives the container every setting the relay reads: the send path's, PROXY protocol on, the hostname and the secret's ARN", () => {
    const env = environmentOf(on.template);
    for (const key of SMTP_RELAY_SPEC.env) expect(env).toHaveProperty(key);
    expect(env).toMatchObject({
      SMTP_RELAY_PROXY_PROTOCOL: 'true',
      SMTP_RELAY_HOSTNAME: RELAY.hostname,
      SMTP_RELAY_SECURED_PORT: String(CONTAINER_PORTS.secured),
      SMTP_RELAY_STARTTLS_PORT: String(CONTAINER_PORTS.starttls),
      SMTP_RELAY_HEALTH_PORT: String(CONTAINER_PORTS.health),
      SMTP_RELAY_TLS_SECRET_ARN: TLS_SECRET,
    });
    // The send path's counters go where the functions' do (the default namespace, EmailService).
    expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe('EmailService');
    const sendEnv = (on.template.toJSON().Resources[
      logicalId(on.stack, on.stack.functions['send-email'] as never)
    ].Properties.Environment.Variables ?? {}) as Record<string, unknown>;
    for (const key of [
      'TABLE_NAME',
      'TABLE_LAYOUT',
      'SEND_QUEUE_URL',
      'CONTENT_BUCKET',
      'RATE_LIMIT_PER_SECOND',
    ])
      expect(env[key]).toEqual(sendEnv[key]);
  });

  it("grants the task role exactly what POST /v1/emails' function holds, and reading the STARTTLS secret", () => {
    const relay = relayOf(on.stack);
    const task = statementsOfRole(on.template, logicalId(on.stack, relay.taskRole));
    const send = policiesOf(on.stack, on.template, 'send-email').filter(
      (s) => ![s.Action].flat().includes('logs:PutLogEvents'),
    );
    expect(normalized(task)).toEqual(
      normalized([...send, { Action: 'secretsmanager:GetSecretValue', Resource: TLS_SECRET }]),
    );
    expect(task.every((s) => s.Effect === 'Allow')).toBe(true);
  });

  it("subscribes the relay's log group to the request-log writer, as the API functions' groups are", () => {
    const relay = relayOf(on.stack);
    const writer = on.stack.requestLogs?.writer.function;
    if (!writer) throw new Error('no writer');
    const filters = Object.values(resourcesOf(on.template, 'AWS::Logs::SubscriptionFilter')).filter(
      (f) =>
        JSON.stringify(f.Properties.LogGroupName) ===
        JSON.stringify({ Ref: logicalId(on.stack, relay.logGroup) }),
    );
    expect(filters).toHaveLength(1);
    expect(filters[0]?.Properties).toMatchObject({
      FilterPattern: REQUEST_LOG_FILTER,
      DestinationArn: { 'Fn::GetAtt': [logicalId(on.stack, writer), 'Arn'] },
    });
    on.template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [
        Match.objectLike({
          LogConfiguration: Match.objectLike({
            LogDriver: 'awslogs',
            Options: Match.objectLike({ 'awslogs-group': { Ref: logicalId(on.stack, relay.logGroup) } }),
          }),
        }),
      ],
    });
  });

  it("scales from two tasks by target tracking on the relay's ActiveConnections per task", () => {
    on.template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: RELAY_MIN_TASKS,
      MaxCapacity: 10,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    on.template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        TargetValue: RELAY_TARGET_CONNECTIONS,
        CustomizedMetricSpecification: Match.objectLike({
          Namespace: RELAY_METRICS.namespace,
          MetricName: RELAY_METRICS.activeConnections,
          Statistic: 'Average',
          Dimensions: [{ Name: 'service', Value: 'Test' }],
        }),
      }),
    });
  });

  it("is a nested stack of its own, so the parent's room for routes stays as it was", () => {
    const relay = relayOf(on.stack);
    expect(Stack.of(relay).nestedStackParent).toBe(on.stack);
    const parent = Template.fromStack(on.stack).toJSON().Resources as Record<string, Resource>;
    const types = Object.values(parent).map((r) => r.Type);
    expect(
      types.filter((t) => /^AWS::(EC2|ECS|ElasticLoadBalancingV2|ApplicationAutoScaling)::/.test(t)),
    ).toEqual([]);
    const without = Template.fromStack(off().stack).toJSON().Resources as Record<string, Resource>;
    expect(types.length).toBe(Object.keys(without).length + 1);
  });

  it('outputs the load balancer to point the host name at, and the ports', () => {
    const outputs = on.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.SmtpRelayLoadBalancer?.Value).toEqual({
      'Fn::GetAtt': [logicalId(on.stack, relayOf(on.stack).loadBalancer), 'DNSName'],
    });
    expect(outputs.SmtpRelayEndpoint?.Value).toBe(
      'smtp.example.com: 465, 2465 (implicit TLS); 587, 2587 (STARTTLS); user resend, password an API key',
    );
  });
});

describe('the SMTP relay without a STARTTLS certificate', () => {
  it('serves only 465 and 2465: no TCP listener, no STARTTLS port or secret, and the synth warns', () => {
    const { stack, template } = synth({ hostname: RELAY.hostname, certificateArn: CERTIFICATE });
    const listeners = Object.values(resourcesOf(template, 'AWS::ElasticLoadBalancingV2::Listener'));
    expect(listeners.map((l) => [l.Properties.Port, l.Properties.Protocol]).sort()).toEqual([
      [2465, 'TLS'],
      [465, 'TLS'],
    ]);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::TargetGroup', 1);
    expect(environmentOf(template)).not.toHaveProperty('SMTP_RELAY_TLS_SECRET_ARN');
    const task = statementsOfRole(template, logicalId(stack, relayOf(stack).taskRole));
    expect(JSON.stringify(task)).not.toContain('secretsmanager');
    expect(
      ingressOf(template, logicalId(stack, relayOf(stack).taskSecurityGroup))
        .map((r) => r.FromPort)
        .sort(),
    ).toEqual([CONTAINER_PORTS.secured, CONTAINER_PORTS.health].sort());
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('no STARTTLS certificate'));
  });
});

describe('the SMTP relay in isolated subnets (smtpRelayNetwork=endpoints)', () => {
  it('reaches S3 and DynamoDB by gateway endpoints and SQS, ECR, CloudWatch Logs and Secrets Manager by interface endpoints, from the tasks only', () => {
    const { stack, template } = synth({ ...RELAY, network: 'endpoints' });
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.hasResourceProperties('AWS::ECS::Service', {
      NetworkConfiguration: { AwsvpcConfiguration: Match.objectLike({ AssignPublicIp: 'DISABLED' }) },
    });
    // com.amazonaws.<region>.<service>, or joined with the region's reference (S3's gateway).
    const serviceOf = (name: unknown) =>
      typeof name === 'string'
        ? name.replace(/^com\.amazonaws\.[\w-]+\./, '')
        : String((name as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1].at(-1)).replace(/^\./, '');
    const endpoints = Object.values(resourcesOf(template, 'AWS::EC2::VPCEndpoint')).map((e) => [
      serviceOf(e.Properties.ServiceName),
      e.Properties.VpcEndpointType,
    ]);
    expect(endpoints.sort()).toEqual(
      [
        ['dynamodb', 'Gateway'],
        ['ecr.api', 'Interface'],
        ['ecr.dkr', 'Interface'],
        ['logs', 'Interface'],
        ['s3', 'Gateway'],
        ['secretsmanager', 'Interface'],
        ['sqs', 'Interface'],
      ].sort(),
    );
    const taskGroup = logicalId(stack, relayOf(stack).taskSecurityGroup);
    for (const endpoint of Object.values(resourcesOf(template, 'AWS::EC2::VPCEndpoint')).filter(
      (e) => e.Properties.VpcEndpointType === 'Interface',
    )) {
      const [group] = (endpoint.Properties.SecurityGroupIds as { 'Fn::GetAtt': [string, string] }[]).map(
        (g) => g['Fn::GetAtt'][0],
      );
      const rules = ingressOf(template, group as string);
      expect(rules.map((r) => [r.FromPort, r.SourceSecurityGroupId])).toEqual([
        [443, { 'Fn::GetAtt': [taskGroup, 'GroupId'] }],
      ]);
    }
  });
});

describe('the SMTP relay settings', () => {
  const app = (context: Record<string, string>) => () =>
    buildApp(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), {
      account: '123456789012',
      region: 'us-east-1',
    });

  it('are read from -c smtpRelay=true and its companions, and the synth names what is missing or malformed', () => {
    expect(app({ smtpRelay: 'true' })).toThrow(/smtpRelayHostname must be.*smtpRelayCertificateArn must be/);
    expect(
      app({
        smtpRelay: 'true',
        smtpRelayHostname: 'smtp.example.com',
        smtpRelayCertificateArn: CERTIFICATE,
        smtpRelayTlsSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:relaytls',
        smtpRelayNetwork: 'nat',
        smtpRelayMaxTasks: '1',
      }),
    ).toThrow(
      /smtpRelayTlsSecretArn must be.*smtpRelayNetwork must be public or endpoints.*smtpRelayMaxTasks must be/,
    );
    const { service } = app({
      smtpRelay: 'true',
      smtpRelayHostname: 'smtp.example.com',
      smtpRelayCertificateArn: CERTIFICATE,
      smtpRelayMaxTasks: '4',
    })();
    templateOf(service).hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MaxCapacity: 4,
    });
    expect(app({ smtpRelay: 'false', smtpRelayHostname: 'ignored' })().service.smtpRelay).toBeUndefined();
  });
});

describe('the SMTP relay under cdk-nag, and its image as cdk synth stages it', () => {
  const outdirs: string[] = [];
  afterAll(() => {
    for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
  });

  it.each(['public', 'endpoints'])(
    'passes the AwsSolutions checks (%s); each finding it acknowledges says why; the staged image has the Dockerfile and a bundle Node takes',
    (network) => {
      const outdir = mkdtempSync(join(tmpdir(), 'cdk-smtp-relay-'));
      outdirs.push(outdir);
      const app = new App({
        outdir,
        context: {
          'aws:cdk:bundling-stacks': [],
          smtpRelay: 'true',
          smtpRelayHostname: 'smtp.example.com',
          smtpRelayCertificateArn: CERTIFICATE,
          smtpRelayTlsSecretArn: TLS_SECRET,
          smtpRelayNetwork: network,
          alarmEmail: 'ops@example.com',
        },
      });
      const { service } = buildApp(app, { account: '123456789012', region: 'eu-west-1' });
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      const assembly = app.synth();
      const relay = relayOf(service);
      const acknowledged = relay.node
        .findAll()
        .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
        .flatMap((m) => Object.entries(m.data as Record<string, string>));
      expect(
        new Set(acknowledged.map(([id]) => id.replace(/^Annotation::/, '').replace(/\[.*$/, ''))),
      ).toEqual(
        new Set([
          'AwsSolutions-VPC7',
          'AwsSolutions-EC23',
          'AwsSolutions-ELB2',
          'AwsSolutions-ECS2',
          'AwsSolutions-ECS4',
          'AwsSolutions-IAM5',
        ]),
      );
      for (const [, reason] of acknowledged) expect(reason.length).toBeGreaterThan(40);

      // The image asset: a directory of the assembly with the Dockerfile and the bundled program.
      const images = readdirSync(assembly.directory).filter(
        (name) => name.startsWith('asset.') && existsSync(join(assembly.directory, name, 'Dockerfile')),
      );
      expect(images).toHaveLength(1);
      const image = join(assembly.directory, images[0] as string);
      expect(readFileSync(join(image, 'Dockerfile'), 'utf8')).toBe(RELAY_DOCKERFILE);
      expect(RELAY_DOCKERFILE).not.toMatch(/^RUN /m);
      execFileSync(process.execPath, ['--check', join(image, 'index.mjs')]);
      const manifest = JSON.parse(
        readFileSync(join(assembly.directory, `${service.artifactId}.assets.json`), 'utf8'),
      ) as { dockerImages: Record<string, { source: { directory: string; platform?: string } }> };
      expect(Object.values(manifest.dockerImages).map((i) => i.source)).toEqual([
        expect.objectContaining({ directory: images[0], platform: 'linux/arm64' }),
      ]);
    },
  );
});
