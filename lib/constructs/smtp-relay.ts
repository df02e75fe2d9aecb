import {
  Annotations,
  CfnOutput,
  Duration,
  NestedStack,
  RemovalPolicy,
  Size,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpointAwsService,
  Peer,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import {
  AwsLogDriverMode,
  type CfnService,
  Cluster,
  type ContainerDefinition,
  FargateService,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import {
  ListenerCertificate,
  NetworkLoadBalancer,
  NetworkTargetGroup,
  Protocol,
  SslPolicy,
  TargetType,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { FilterPattern, LogGroup, type RetentionDays, SubscriptionFilter } from 'aws-cdk-lib/aws-logs';
import { LambdaDestination } from 'aws-cdk-lib/aws-logs-destinations';
import { Construct } from 'constructs';
import type { EnvKey } from '../../functions/catalog.js';
import { SMTP_RELAY_SPEC } from '../../functions/smtp-relay/access.js';
import {
  CONTAINER_PORTS,
  DEREGISTRATION_DELAY_SECONDS,
  NLB_PORTS,
  RELAY_METRICS,
  STOP_TIMEOUT_SECONDS,
} from '../../functions/smtp-relay/settings.js';
import { RELAY_ARCHITECTURE, relayImage } from '../smtp-relay-image.js';
import { REQUEST_LOG_FILTER, type RequestLogs } from './request-logs.js';
import { type ServiceResources, SpecAccess } from './service-function.js';
import { deployedStack } from './stack-of.js';

/** Where the relay's tasks run, and how they reach AWS's APIs: never through a NAT gateway. */
export type SmtpRelayNetwork = 'public' | 'endpoints';

/** The relay's settings, as the app reads them (`-c smtpRelay=true -c smtpRelayHostname=…`). */
export interface SmtpRelayOptions {
  /** The host name apps connect to (a DNS record of yours to the `SmtpRelayLoadBalancer` output). */
  readonly hostname: string;
  /** An issued ACM certificate for `hostname`, in the stack's region: the 465 and 2465 TLS listeners'. */
  readonly certificateArn: string;
  /**
   * The complete ARN of a Secrets Manager secret holding the certificate the tasks present on STARTTLS
   * (JSON `certificate`, `privateKey`, optional `certificateChain`, PEM), reloaded without a restart.
   * @default none: no 587 and 2587 listeners (an NLB cannot do STARTTLS), and the synth says so
   */
  readonly tlsSecretArn?: string;
  /**
   * `public`: public subnets, each task with a public IP (reachable only from the load balancer's
   * security group). `endpoints`: isolated subnets and VPC endpoints. @default 'public'
   */
  readonly network?: SmtpRelayNetwork;
  /** Most tasks scaling adds (at least 2). @default 10 */
  readonly maxTasks?: number;
}

/** The stack's setting (EmailServiceStackProps extends it). */
export interface SmtpRelayStackProps {
  /** The opt-in SMTP relay (docs/operations.md, "SMTP relay"). @default off */
  readonly smtpRelay?: SmtpRelayOptions;
}

export interface SmtpRelayProps extends SmtpRelayOptions {
  /** What the send path's function is bound to: the table, the send queue, the content bucket, the settings. */
  readonly resources: ServiceResources;
  /** The request logs' writer, whose subscription the relay's log group gets as the API functions' do. */
  readonly requestLogs?: RequestLogs;
  /** The relay's log group's retention (the API functions' request-log line retention). */
  readonly logRetention: RetentionDays;
}

/** Tasks always running: one per Availability Zone. */
export const RELAY_MIN_TASKS = 2;
/** Open SMTP connections per task that scaling keeps the average at. */
export const RELAY_TARGET_CONNECTIONS = 50;
/** Each task's size: a quarter vCPU (sessions mostly wait), 1 GB (a few 40 MB messages in flight). */
export const RELAY_TASK_SIZE = { cpu: 256, memoryLimitMiB: 1024 } as const;
/** The container's name (its target groups name it). */
export const RELAY_CONTAINER = 'relay';

/** The relay's task role and container environment, granted by the code that grants functions. */
class RelayAccess extends SpecAccess {
  constructor(
    scope: Construct,
    id: string,
    public readonly role: Role,
    private readonly container: ContainerDefinition,
  ) {
    super(scope, id, 'smtp-relay', SMTP_RELAY_SPEC);
  }

  protected addEnvironment(key: EnvKey, value: string): void {
    this.container.addEnvironment(key, value);
  }
}

/**
 * The opt-in SMTP relay on AWS (issue 42): the relay's code (functions/smtp-relay/) in a container
 * on ECS Fargate (ARM64) behind an internet-facing Network Load Balancer, in a VPC of its own with
 * no NAT gateway.
 *
 * - 465 and 2465: TLS listeners (the ACM certificate, TLS 1.2 and 1.3) to the tasks' secured port,
 *   plain TCP that only the load balancer's security group reaches, which the relay treats as
 *   already secured. 587 and 2587 (with a STARTTLS certificate): TCP pass-through to the tasks'
 *   STARTTLS port, where the relay does the TLS itself.
 * - Both target groups send PROXY protocol v2 (the client's address, which the relay reads before
 *   SMTP starts; client IP preservation off), check `GET /health` on the health port, and keep a
 *   deregistered task's sessions DEREGISTRATION_DELAY_SECONDS; its container then gets SIGTERM and
 *   STOP_TIMEOUT_SECONDS (Fargate's most) to let an open DATA finish, answering 421 to the rest.
 * - The task role holds exactly what POST /v1/emails' function holds (SMTP_RELAY_SPEC, granted by
 *   SpecAccess), and reading the STARTTLS secret. Its log group sends request-log lines to the
 *   writer, so SMTP sessions are in GET /v1/logs.
 * - Two tasks at least (one per zone), up to `maxTasks`, by target tracking on the relay's own
 *   metric, ActiveConnections per task: the load balancer's ActiveFlowCount counts the whole load
 *   balancer, not a task, and would need step thresholds tuned to a task's capacity.
 */
export class SmtpRelay extends Construct {
  public readonly vpc: Vpc;
  public readonly loadBalancer: NetworkLoadBalancer;
  public readonly loadBalancerSecurityGroup: SecurityGroup;
  public readonly taskSecurityGroup: SecurityGroup;
  public readonly service: FargateService;
  public readonly taskDefinition: FargateTaskDefinition;
  public readonly container: ContainerDefinition;
  public readonly taskRole: Role;
  public readonly logGroup: LogGroup;
  /** The secured port's targets (behind 465 and 2465), and the STARTTLS port's (587, 2587) when there is a secret. */
  public readonly securedTargets: NetworkTargetGroup;
  public readonly startTlsTargets?: NetworkTargetGroup;
  /** The access granted from SMTP_RELAY_SPEC (for tests and inspection). */
  public readonly access: SpecAccess;

  constructor(scope: Construct, id: string, props: SmtpRelayProps) {
    super(scope, id);
    const network = props.network ?? 'public';
    checkOptions(props, network);
    const maxTasks = props.maxTasks ?? 10;
    const isolated = network === 'endpoints';
    const taskSubnets = { subnetType: isolated ? SubnetType.PRIVATE_ISOLATED : SubnetType.PUBLIC };

    this.vpc = new Vpc(this, 'Network', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [
        { name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        ...(isolated ? [{ name: 'Tasks', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }] : []),
      ],
    });
    Validations.of(this.vpc).acknowledge({
      id: 'AwsSolutions-VPC7',
      reason:
        "The relay's VPC holds only its load balancer and tasks; every SMTP session is logged by the relay with the client's address (PROXY protocol), so flow logs would add cost and nothing to find.",
    });
    // The load balancer's group takes SMTP from anywhere on its listeners' ports; the tasks' group
    // takes only the load balancer's group, on the container's ports (its egress is opened below).
    const listenerPorts = [...NLB_PORTS.implicitTls, ...(props.tlsSecretArn ? NLB_PORTS.starttls : [])];
    this.loadBalancerSecurityGroup = new SecurityGroup(this, 'LoadBalancerSecurity', {
      vpc: this.vpc,
      allowAllOutbound: false,
      description: 'The SMTP relay load balancer: SMTP from anywhere, to the tasks only',
    });
    for (const port of listenerPorts)
      this.loadBalancerSecurityGroup.addIngressRule(Peer.anyIpv4(), Port.tcp(port), `SMTP on ${port}`);
    Validations.of(this.loadBalancerSecurityGroup).acknowledge({
      id: 'AwsSolutions-EC23',
      reason:
        "An SMTP submission service is reached by apps anywhere; the relay limits each client address (connections, failed AUTH) and the tasks' group takes only this group.",
    });
    this.taskSecurityGroup = new SecurityGroup(this, 'TaskSecurity', {
      vpc: this.vpc,
      allowAllOutbound: false,
      description: 'The SMTP relay tasks: from the load balancer only; HTTPS out to the AWS APIs',
    });
    this.taskSecurityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), "AWS's APIs (HTTPS)");
    const containerPorts = [
      CONTAINER_PORTS.secured,
      ...(props.tlsSecretArn ? [CONTAINER_PORTS.starttls] : []),
      CONTAINER_PORTS.health,
    ];
    for (const port of containerPorts)
      this.taskSecurityGroup.connections.allowFrom(
        this.loadBalancerSecurityGroup,
        Port.tcp(port),
        `From the load balancer to ${port}`,
      );

    // Without a NAT gateway: the APIs the tasks call, reached from the tasks' group only.
    if (isolated) {
      for (const [name, service] of [
        ['S3', GatewayVpcEndpointAwsService.S3],
        ['DynamoDb', GatewayVpcEndpointAwsService.DYNAMODB],
      ] as const)
        this.vpc.addGatewayEndpoint(name, { service, subnets: [taskSubnets] });
      for (const [name, service] of [
        ['Sqs', InterfaceVpcEndpointAwsService.SQS],
        ['EcrApi', InterfaceVpcEndpointAwsService.ECR],
        ['EcrDocker', InterfaceVpcEndpointAwsService.ECR_DOCKER],
        ['Logs', InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS],
        ...(props.tlsSecretArn
          ? [['SecretsManager', InterfaceVpcEndpointAwsService.SECRETS_MANAGER] as const]
          : []),
      ] as const)
        this.vpc
          .addInterfaceEndpoint(name, { service, subnets: taskSubnets, privateDnsEnabled: true, open: false })
          .connections.allowFrom(this.taskSecurityGroup, Port.tcp(443), 'From the relay tasks');
    }

    this.loadBalancer = new NetworkLoadBalancer(this, 'LoadBalancer', {
      vpc: this.vpc,
      internetFacing: true,
      crossZoneEnabled: true,
      securityGroups: [this.loadBalancerSecurityGroup],
      vpcSubnets: { subnetType: SubnetType.PUBLIC },
    });
    Validations.of(this.loadBalancer).acknowledge({
      id: 'AwsSolutions-ELB2',
      reason:
        "An NLB logs only its TLS listeners' handshakes; the relay logs every session (client address, key id and name) in its own log group.",
    });

    // The task: its role (the send path's grants), its log group, its container.
    this.taskRole = new Role(this, 'TaskRole', {
      assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: "The SMTP relay's tasks: what POST /v1/emails' function holds",
    });
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.taskDefinition = new FargateTaskDefinition(this, 'Task', {
      ...RELAY_TASK_SIZE,
      runtimePlatform: {
        cpuArchitecture: RELAY_ARCHITECTURE.cpu,
        operatingSystemFamily: OperatingSystemFamily.LINUX,
      },
      taskRole: this.taskRole,
    });
    const stack = Stack.of(this);
    this.container = this.taskDefinition.addContainer(RELAY_CONTAINER, {
      image: relayImage(this),
      essential: true,
      stopTimeout: Duration.seconds(STOP_TIMEOUT_SECONDS),
      portMappings: containerPorts.map((containerPort) => ({ containerPort })),
      // Non-blocking: a slow CloudWatch Logs never stalls SMTP sessions (lines beyond the buffer are lost).
      logging: LogDrivers.awsLogs({
        logGroup: this.logGroup,
        streamPrefix: 'relay',
        mode: AwsLogDriverMode.NON_BLOCKING,
        maxBufferSize: Size.mebibytes(25),
      }),
      environment: {
        AWS_REGION: stack.region,
        NODE_OPTIONS: '--max-old-space-size=768',
        POWERTOOLS_SERVICE_NAME: deployedStack(this).stackName,
        // The send path's counters stay in the functions' namespace (their dashboards and alarms);
        // only the relay's own metric is under RELAY_METRICS.namespace, which its line names.
        POWERTOOLS_METRICS_NAMESPACE: 'EmailService',
      },
    });
    Validations.of(this.taskDefinition).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason:
        "The environment holds names and settings (table, queue, bucket, ports, the secret's ARN), never a secret: the STARTTLS key is read from Secrets Manager at run time.",
    });

    this.access = new RelayAccess(this, 'Access', this.taskRole, this.container);
    const settings: Partial<Record<EnvKey, string>> = {
      ...props.resources.settings,
      SMTP_RELAY_HOSTNAME: props.hostname,
      SMTP_RELAY_STARTTLS_PORT: String(CONTAINER_PORTS.starttls),
      SMTP_RELAY_SECURED_PORT: String(CONTAINER_PORTS.secured),
      SMTP_RELAY_HEALTH_PORT: String(CONTAINER_PORTS.health),
      SMTP_RELAY_PROXY_PROTOCOL: 'true',
    };
    this.access.bind({ ...props.resources, settings });
    if (props.tlsSecretArn) {
      this.taskRole.addToPolicy(
        new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [props.tlsSecretArn] }),
      );
      this.access.setEnvironment('SMTP_RELAY_TLS_SECRET_ARN', props.tlsSecretArn);
    } else
      Annotations.of(this).addWarningV2(
        'email-service:smtpRelayTlsSecretArn',
        'The SMTP relay has no STARTTLS certificate (smtpRelayTlsSecretArn): only 465 and 2465 (implicit TLS) are served, no 587 or 2587 (docs/operations.md, "SMTP relay").',
      );
    // Pulling the image from the stack's asset repository: ECR's token action has no resource type.
    this.taskDefinition.obtainExecutionRole();
    Validations.of(this.taskDefinition).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'The execution role pulls the image: ecr:GetAuthorizationToken has no resource type in IAM; the pull actions are on the asset repository only.',
    });

    const cluster = new Cluster(this, 'Cluster', { vpc: this.vpc });
    Validations.of(cluster).acknowledge({
      id: 'AwsSolutions-ECS4',
      reason:
        "Container Insights bills custom metrics per task; the relay publishes its own ActiveConnections metric, which scaling tracks, and the load balancer's metrics cover the rest.",
    });
    this.service = new FargateService(this, 'Service', {
      cluster,
      taskDefinition: this.taskDefinition,
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      assignPublicIp: !isolated,
      vpcSubnets: taskSubnets,
      securityGroups: [this.taskSecurityGroup],
      circuitBreaker: { enable: true, rollback: true },
      healthCheckGracePeriod: Duration.seconds(60),
    });

    // No DesiredCount in the template: with one, every update of the service (each deploy of a new
    // image) would set the count back to it, whatever scaling had made it (aws/aws-cdk#3919). ECS
    // creates the service with 1 task, and registering the scalable target raises it to the minimum.
    (this.service.node.defaultChild as CfnService).addPropertyDeletionOverride('DesiredCount');

    // The STARTTLS port's targets are checked at /health/starttls, which fails on a task that
    // could not read its certificate, so 587 goes only to tasks that can serve it.
    const targets = (name: string, port: number, path = '/health') => {
      const group = new NetworkTargetGroup(this, name, {
        vpc: this.vpc,
        port,
        protocol: Protocol.TCP,
        targetType: TargetType.IP,
        proxyProtocolV2: true,
        preserveClientIp: false,
        deregistrationDelay: Duration.seconds(DEREGISTRATION_DELAY_SECONDS),
        healthCheck: {
          protocol: Protocol.HTTP,
          port: String(CONTAINER_PORTS.health),
          path,
          interval: Duration.seconds(10),
          healthyThresholdCount: 2,
          unhealthyThresholdCount: 2,
        },
      });
      group.addTarget(
        this.service.loadBalancerTarget({ containerName: RELAY_CONTAINER, containerPort: port }),
      );
      return group;
    };
    this.securedTargets = targets('SecuredTargets', CONTAINER_PORTS.secured);
    for (const port of NLB_PORTS.implicitTls)
      this.loadBalancer.addListener(`Tls${port}`, {
        port,
        protocol: Protocol.TLS,
        certificates: [ListenerCertificate.fromArn(props.certificateArn)],
        sslPolicy: SslPolicy.RECOMMENDED_TLS,
        defaultTargetGroups: [this.securedTargets],
      });
    if (props.tlsSecretArn) {
      const startTls = targets('StartTlsTargets', CONTAINER_PORTS.starttls, '/health/starttls');
      this.startTlsTargets = startTls;
      for (const port of NLB_PORTS.starttls)
        this.loadBalancer.addListener(`Tcp${port}`, {
          port,
          protocol: Protocol.TCP,
          defaultTargetGroups: [startTls],
        });
    }

    this.service
      .autoScaleTaskCount({ minCapacity: RELAY_MIN_TASKS, maxCapacity: maxTasks })
      .scaleToTrackCustomMetric('Connections', {
        // Each task's line, by the dimension Powertools' metrics give it (the service name).
        metric: new Metric({
          namespace: RELAY_METRICS.namespace,
          metricName: RELAY_METRICS.activeConnections,
          dimensionsMap: { service: deployedStack(this).stackName },
          statistic: 'Average',
          period: Duration.minutes(1),
        }),
        targetValue: RELAY_TARGET_CONNECTIONS,
        scaleOutCooldown: Duration.minutes(1),
        scaleInCooldown: Duration.minutes(5),
      });

    if (props.requestLogs) {
      const { writer } = props.requestLogs;
      const filter = new SubscriptionFilter(this, 'RequestLogs', {
        logGroup: this.logGroup,
        destination: new LambdaDestination(writer.function, { addPermissions: false }),
        filterPattern: FilterPattern.literal(REQUEST_LOG_FILTER),
      });
      // The writer's permission covers every log group of the account in this region.
      filter.node.addDependency(writer.function.node.findChild('FromApiLogGroups'));
    }
  }
}

/**
 * The relay when the stack's setting turns it on, bound to the send path's resources, with the
 * stack's request logs (their writer; the API functions' line retention for its log group).
 */
export function smtpRelayOf(
  stack: Stack & { readonly requestLogs?: RequestLogs },
  props: SmtpRelayStackProps,
  resources: ServiceResources,
  requestLogKeeping: { readonly lineLogGroups: RetentionDays },
): SmtpRelay | undefined {
  const options = props.smtpRelay;
  if (!options) return undefined;
  // A nested stack of its own: its 60-odd resources leave the parent's room for routes as it was.
  const nested = new NestedStack(stack, 'SmtpRelayStack', {
    description: `The ${stack.stackName} SMTP relay: ECS Fargate behind a Network Load Balancer`,
  });
  const relay = new SmtpRelay(nested, 'SmtpRelay', {
    ...options,
    resources,
    requestLogs: stack.requestLogs,
    logRetention: requestLogKeeping.lineLogGroups,
  });
  new CfnOutput(stack, 'SmtpRelayLoadBalancer', {
    value: relay.loadBalancer.loadBalancerDnsName,
    description: `The SMTP relay's load balancer: point ${options.hostname} at it (CNAME)`,
  });
  new CfnOutput(stack, 'SmtpRelayEndpoint', {
    value: `${options.hostname}: ${NLB_PORTS.implicitTls.join(', ')} (implicit TLS)${
      options.tlsSecretArn ? `; ${NLB_PORTS.starttls.join(', ')} (STARTTLS)` : ''
    }; user resend, password an API key`,
  });
  return relay;
}

/** The settings checked at synth: a message naming what is missing or malformed. */
function checkOptions(options: SmtpRelayOptions, network: string) {
  const problems: string[] = [];
  if (
    !options.hostname ||
    !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(options.hostname)
  )
    problems.push(
      `smtpRelayHostname must be the relay's host name (smtp.example.com), not "${options.hostname ?? ''}"`,
    );
  if (!/^arn:aws[\w-]*:acm:[\w-]+:\d{12}:certificate\/[\w-]+$/.test(options.certificateArn ?? ''))
    problems.push(
      `smtpRelayCertificateArn must be an ACM certificate's ARN, not "${options.certificateArn ?? ''}"`,
    );
  if (
    options.tlsSecretArn !== undefined &&
    !/^arn:aws[\w-]*:secretsmanager:[\w-]+:\d{12}:secret:[\w/+=.@-]+-[A-Za-z0-9]{6}$/.test(
      options.tlsSecretArn,
    )
  )
    problems.push(
      `smtpRelayTlsSecretArn must be a secret's complete ARN (ending in its 6-character suffix), not "${options.tlsSecretArn}"`,
    );
  if (network !== 'public' && network !== 'endpoints')
    problems.push(`smtpRelayNetwork must be public or endpoints, not "${network}"`);
  const max = options.maxTasks ?? 10;
  if (!Number.isInteger(max) || max < RELAY_MIN_TASKS || max > 100)
    problems.push(`smtpRelayMaxTasks must be a whole number from ${RELAY_MIN_TASKS} to 100, not ${max}`);
  if (problems.length) throw new Error(`The SMTP relay's settings: ${problems.join('; ')}`);
}
