import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { DomainName } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Function as LambdaFunction,
  ParamsAndSecretsLayerVersion,
  ParamsAndSecretsVersions,
  Runtime,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { FRONT_DOOR_AUTHORIZER, FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';
import { functionCode } from '../function-code.js';
import type { EmailApi } from './email-api.js';

export interface FrontDoorFirewallProps {
  /**
   * Requests one client address may make per five minutes; past it, 429 in the API's error shape
   * until its rate falls back under. WAF counts at its edge, before API Gateway's shared throttle.
   * @default 3000 (10 a second: one API key's own limit)
   */
  readonly requestsPerFiveMinutes?: number;
}

/** What a blocked request is answered with: the API's one error shape. */
const RATE_LIMITED_BODY = JSON.stringify({
  statusCode: 429,
  name: 'rate_limit_exceeded',
  message: 'Too many requests from this address. Retry after a minute.',
});

/**
 * The front door's firewall: a WAF web ACL for CloudFront (so it lives in us-east-1, whatever the
 * API's region) with one rule, a rate limit per client IP. $5 a month, $1 for the rule, $0.60 per
 * million requests.
 */
export class FrontDoorFirewall extends Construct {
  public readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: FrontDoorFirewallProps = {}) {
    super(scope, id);
    if (Stack.of(this).region !== 'us-east-1')
      throw new Error(`A CloudFront web ACL lives in us-east-1; this stack is in ${Stack.of(this).region}.`);
    const limit = props.requestsPerFiveMinutes ?? 3_000;
    if (!Number.isInteger(limit) || limit < 10)
      throw new Error(
        `requestsPerFiveMinutes must be an integer of at least 10 (WAF's minimum), not ${limit}`,
      );
    const metricName = (name: string) => `${Stack.of(this).stackName}-${name}`.replace(/[^\w-]/g, '');
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      description: 'The email API front door: a request rate limit per client address',
      defaultAction: { allow: {} },
      customResponseBodies: { rate_limited: { contentType: 'APPLICATION_JSON', content: RATE_LIMITED_BODY } },
      rules: [
        {
          name: 'PerClientAddress',
          priority: 0,
          statement: { rateBasedStatement: { limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'rate_limited',
                responseHeaders: [{ name: 'retry-after', value: '60' }],
              },
            },
          },
          visibilityConfig: {
            cloudWatchMetricsEnabled: true,
            sampledRequestsEnabled: true,
            metricName: metricName('per-client-address'),
          },
        },
      ],
      visibilityConfig: {
        cloudWatchMetricsEnabled: true,
        sampledRequestsEnabled: true,
        metricName: metricName('front-door'),
      },
    });
  }
}

export interface FrontDoorProps {
  /** The API it stands in front of: from now on it serves only what this front door forwards. */
  readonly api: EmailApi;
  /** The firewall's web ACL (FrontDoorFirewall, in us-east-1). */
  readonly webAclArn: string;
  /**
   * The API's own custom domain, CloudFront's origin (the `execute-api` endpoint is disabled).
   * Its DNS name must resolve, to the domain's regional domain name (the `FrontDoorOriginTarget`
   * output), for CloudFront to reach it.
   */
  readonly originDomainName: string;
  /** An ACM certificate for `originDomainName`, issued, in the API's region. */
  readonly originCertificateArn: string;
}

/**
 * The optional front door: a CloudFront distribution (HTTPS only, nothing cached, every header but
 * Host forwarded, so `Authorization` and `Idempotency-Key` reach the API) with the firewall's web
 * ACL, in front of the HTTP API (which takes neither WAF nor usage plans). The API is closed
 * behind it: its `execute-api` endpoint disabled, served at a custom domain of the user's (the
 * origin), and every route behind a Lambda authorizer that passes only requests carrying the
 * secret header CloudFront adds (the custom domain's name is public, in certificate transparency
 * logs). The secret is generated in Secrets Manager; CloudFormation resolves it into CloudFront's
 * origin header at deploy time (never in the template), and the authorizer reads it from Secrets
 * Manager at run time (through the secrets extension, granted GetSecretValue on it alone): no
 * function holds it in its environment. Changing it means a deploy.
 */
export class FrontDoor extends Construct {
  public readonly distribution: Distribution;
  public readonly secret: Secret;
  /** The authorizer every route of the API is behind. */
  public readonly authorizer: LambdaFunction;
  /** The API's custom domain: CloudFront's origin. */
  public readonly originDomain: DomainName;

  constructor(scope: Construct, id: string, props: FrontDoorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.secret = new Secret(this, 'OriginSecret', {
      description: `What CloudFront sends the ${stack.stackName} API in ${FRONT_DOOR_HEADER}`,
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'CloudFront reads the secret when the stack deploys (a dynamic reference into its origin header); a rotation ' +
        'would not reach it, so it is changed by a deploy instead.',
    });
    this.authorizer = this.makeAuthorizer(stack);
    this.originDomain = props.api.closeBehind({
      domainName: props.originDomainName,
      certificateArn: props.originCertificateArn,
      authorizer: this.authorizer,
    });
    const secretValue = this.secret.secretValue.unsafeUnwrap();
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `${stack.stackName} API front door`,
      defaultBehavior: {
        origin: new HttpOrigin(props.originDomainName, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          customHeaders: { [FRONT_DOOR_HEADER]: secretValue },
          readTimeout: Duration.seconds(30),
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
      },
      webAclId: props.webAclArn,
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
    });
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: 'An email API is called from wherever its users run; no country is refused by default.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          "The API stage keeps an access log of every request; CloudFront's own log would need an S3 bucket and repeat it.",
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          "Viewers reach the distribution at CloudFront's default domain and certificate, whose TLS policy CloudFront sets; " +
          "they are HTTPS only, and the origin (the API's custom domain, TLS 1.2 policy) is reached over TLS 1.2.",
      },
    );
    new CfnOutput(stack, 'FrontDoorOriginTarget', {
      value: this.originDomain.regionalDomainName,
      description: `Where ${props.originDomainName} must point (a CNAME record) for CloudFront to reach the API`,
    });
  }

  /**
   * The authorizer: the smallest function of the stack (no SDK: the secret comes through the AWS
   * Parameters and Secrets Lambda Extension's layer, which calls GetSecretValue with its role and
   * keeps the value 300 s), its own role (its log group, and GetSecretValue on this secret only).
   */
  private makeAuthorizer(stack: Stack): LambdaFunction {
    const logGroup = new LogGroup(this, 'AuthorizerLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(this, 'AuthorizerRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });
    role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.secret.secretArn] }),
    );
    const authorizer = new LambdaFunction(this, 'Authorizer', {
      code: functionCode(FRONT_DOOR_AUTHORIZER),
      handler: 'index.handler',
      description: `${stack.stackName} API front door: passes requests carrying CloudFront's secret header`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(5),
      environment: { FRONT_DOOR_SECRET_ARN: this.secret.secretArn },
      paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103, {
        secretsManagerTimeout: Duration.seconds(3),
      }),
      role,
      logGroup,
    });
    Validations.of(authorizer).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime this project targets and tests against; moving to 24 is a deliberate change.',
    });
    return authorizer;
  }
}

/**
 * The front door's origin settings, or an error saying what to give: the API's custom domain (a
 * host name) and an ACM certificate ARN for it in the API's region.
 */
export function frontDoorOrigin(door: { originDomainName?: string; originCertificateArn?: string }) {
  const { originDomainName, originCertificateArn } = door;
  const problems: string[] = [];
  if (
    !originDomainName ||
    !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(originDomainName)
  )
    problems.push(
      `frontDoorDomain must be the host name of the API's own custom domain, CloudFront's origin (api-origin.example.com), not ${JSON.stringify(originDomainName)}`,
    );
  if (
    !originCertificateArn ||
    !/^arn:aws[\w-]*:acm:[\w-]+:\d{12}:certificate\/[\w-]+$/.test(originCertificateArn)
  )
    problems.push(
      `frontDoorCertificateArn must be the ARN of an issued ACM certificate for that name, in the API's region (arn:aws:acm:<region>:<account>:certificate/<id>), not ${JSON.stringify(originCertificateArn)}`,
    );
  if (problems.length)
    throw new Error(
      `The front door closes the API's execute-api endpoint and serves it at a custom domain: ${problems.join('; ')} (docs/operations.md, "Front door").`,
    );
  return {
    originDomainName: originDomainName as string,
    originCertificateArn: originCertificateArn as string,
  };
}
