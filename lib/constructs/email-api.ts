import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  ApiMapping,
  type CfnApi,
  CfnRoute,
  type CfnStage,
  DomainName,
  HttpApi,
  HttpAuthorizer,
  HttpAuthorizerType,
  HttpStage,
  LogGroupLogDestination,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { GraphWidget, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { FRONT_DOOR_CACHE_SECONDS, FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';
import { FALLBACK_HANDLER, HEAD_ROUTES, ROUTES, TOKEN_ROUTES } from '../../functions/routes.js';
import { keepLogicalId, LEGACY_IDS, legacyRouteId } from '../legacy-ids.js';
import { ApiIntegrations } from './api-integrations.js';
import type { ConceptStacks } from './concept-stacks.js';
import type { Monitoring } from './monitoring.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

/** Each token route's own throttle (API Gateway's route settings), apart from the API's. */
export const TOKEN_ROUTE_THROTTLE = { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 500 };

export interface EmailApiProps {
  /** What the route functions are bound to (the table, the send queue, the settings). */
  readonly resources: ServiceResources;
  /** Where its functions are deployed (each in its concept's stack, with its integration). */
  readonly functions: ConceptStacks;
  readonly monitoring: Monitoring;
  /** API Gateway stage throttling, all keys together. @default 50 requests/s */
  readonly rateLimit?: number;
  /** @default 100 */
  readonly burstLimit?: number;
  /** How long its access log is kept. @default RetentionDays.ONE_MONTH */
  readonly accessLogRetention?: RetentionDays;
}

/**
 * The HTTP API: HTTPS only (API Gateway has no plain-HTTP listener), one route and one function per
 * entry of the route table (and a HEAD route to each public page's function), and `$default` for everything else (so even unknown routes get the
 * service's error shape), a throttled stage and an access log of one JSON line per request, with
 * no header (so no key) in it. Its alarm: API 5xx answers (a failing or throttled function).
 * The API, its stage, access log and routes are in this stack; each route's function and its
 * integration in the function's concept stack (ConceptStacks), invoked through that stack's one
 * role (ApiIntegrations).
 */
export class EmailApi extends Construct {
  public readonly api: HttpApi;
  public readonly stage: HttpStage;
  public readonly accessLogs: LogGroup;
  /** Each route's function, and the fallback's, by handler. */
  public readonly functions: ReadonlyMap<string, ServiceFunction>;

  /** Every route (`$default` too), by route key. */
  public readonly routes: ReadonlyMap<string, CfnRoute>;

  /**
   * Closes the API behind the front door (FrontDoor): its `execute-api` endpoint disabled, served
   * only at its custom domain (CloudFront's origin), and every route behind `authorizer`, a Lambda
   * authorizer with simple responses whose identity source is the front door's header, so API
   * Gateway refuses a request without the header itself (401, invoking nothing) and keeps each
   * answer for a value FRONT_DOOR_CACHE_SECONDS. Returns the custom domain (its regional domain
   * name is what the origin's DNS name must point to).
   */
  closeBehind(door: {
    /** The API's custom domain name: CloudFront's origin. */
    readonly domainName: string;
    /** An ACM certificate for it, in the API's region. */
    readonly certificateArn: string;
    readonly authorizer: IFunction;
  }): DomainName {
    (this.api.node.defaultChild as CfnApi).disableExecuteApiEndpoint = true;
    const domain = new DomainName(this, 'Domain', {
      domainName: door.domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', door.certificateArn),
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new ApiMapping(this, 'Mapping', { api: this.api, domainName: domain, stage: this.stage });
    const authorizer = new HttpAuthorizer(this, 'FrontDoorAuthorizer', {
      httpApi: this.api,
      authorizerName: 'front-door',
      type: HttpAuthorizerType.LAMBDA,
      identitySource: [`$request.header.${FRONT_DOOR_HEADER}`],
      enableSimpleResponses: true,
      resultsCacheTtl: Duration.seconds(FRONT_DOOR_CACHE_SECONDS),
      authorizerUri: `arn:${Stack.of(this).partition}:apigateway:${Stack.of(this).region}:lambda:path/2015-03-31/functions/${door.authorizer.functionArn}/invocations`,
    });
    door.authorizer.addPermission('InvokedByApiAuthorizer', {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: Stack.of(this).formatArn({
        service: 'execute-api',
        resource: this.api.apiId,
        resourceName: `authorizers/${authorizer.authorizerId}`,
      }),
    });
    for (const route of this.routes.values()) {
      route.authorizationType = 'CUSTOM';
      route.authorizerId = authorizer.authorizerId;
    }
    return domain;
  }

  constructor(scope: Construct, id: string, props: EmailApiProps) {
    super(scope, id);
    const functions = new Map<string, ServiceFunction>();
    const routes = new Map<string, CfnRoute>();
    this.api = new HttpApi(this, 'Api', { createDefaultStage: false, description: 'Email sending API' });
    const integrations = new Map<Stack, ApiIntegrations>();
    const integrated = new Map<string, { integrationId: string }>();
    /** A route to its own function, with its id of old (a route key exists once per API). */
    const route = (routeKey: string, constructId: string, handler: string, memorySize?: number) => {
      // A HEAD route shares its GET's function and integration: one route resource more, no other.
      let integration = integrated.get(handler);
      if (!integration) {
        const fn = props.functions
          .add(handler as never, memorySize ? { memorySize } : {})
          .bind(props.resources);
        functions.set(handler, fn);
        const stack = Stack.of(fn);
        let into = integrations.get(stack);
        if (!into) {
          into = new ApiIntegrations(stack, `${stack.node.id}Api`, { api: this.api });
          integrations.set(stack, into);
        }
        integration = into.integrate(handler, fn.function);
        integrated.set(handler, integration);
      }
      // An update keeps each route and points it at its new integration: a second route with the
      // same key would be refused.
      const cfnRoute = new CfnRoute(this.api, constructId, {
        apiId: this.api.apiId,
        routeKey,
        authorizationType: 'NONE',
        target: `integrations/${integration.integrationId}`,
      });
      cfnRoute.overrideLogicalId(legacyRouteId(constructId));
      routes.set(routeKey, cfnRoute);
    };
    keepLogicalId(this.api, LEGACY_IDS.api);
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Every function authenticates the bearer API key itself (SHA-256 lookup in the table) and answers 401 in the ' +
        "API's own error shape; an authorizer would add an invocation and latency to every request.",
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    keepLogicalId(this.accessLogs, LEGACY_IDS.accessLogs);
    this.stage = new HttpStage(this, 'Stage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.rateLimit ?? 50, burstLimit: props.burstLimit ?? 100 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTimeEpoch',
            ip: '$context.identity.sourceIp',
            route: '$context.routeKey',
            status: '$context.status',
            bytes: '$context.responseLength',
            latency: '$context.responseLatency',
            error: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    keepLogicalId(this.stage, LEGACY_IDS.stage);
    route('$default', 'DefaultRoute', FALLBACK_HANDLER, 256);
    // The construct id HttpApi.addRoutes gave each route (a construct id reads `/` as `--`).
    for (const { method, path, handler } of [...ROUTES, ...HEAD_ROUTES])
      route(`${method} ${path}`, `${method}${path}`.replaceAll('/', '--'), handler);
    this.functions = functions;
    this.routes = routes;
    // The token routes throttled on their own (a burst of one-click POSTs after a send is not the users' API).
    (this.stage.node.defaultChild as CfnStage).routeSettings = Object.fromEntries(
      TOKEN_ROUTES.map((r) => [`${r.method} ${r.path}`, TOKEN_ROUTE_THROTTLE]),
    );

    const apiMetric = (metricName: string, statistic = 'Sum') =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: this.api.apiId, Stage: '$default' },
        statistic,
        period: Duration.minutes(5),
      });
    props.monitoring.alarm('Api5xx', apiMetric('5xx'), {
      threshold: 5,
      alarmDescription:
        'The API answered 5xx at least 5 times in 5 minutes: a function failed or was throttled (its logs, and the Lambda metrics, say which).',
    });
    props.monitoring.addRow(
      'api',
      new GraphWidget({
        title: 'API requests and errors',
        left: [apiMetric('Count')],
        right: [apiMetric('4xx'), apiMetric('5xx')],
        width: 12,
      }),
      new GraphWidget({
        title: 'API latency',
        left: [apiMetric('Latency', 'p50'), apiMetric('Latency', 'p99')],
        right: [
          props.monitoring.counter('RateLimited').with({ label: 'over their key limit (429)' }),
          props.monitoring.counter('IdempotentReplays').with({ label: 'idempotent replays' }),
        ],
        width: 12,
      }),
    );
  }
}
