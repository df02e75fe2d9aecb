import { Duration, Stack, Validations } from 'aws-cdk-lib';
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
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';
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
}

/**
 * The optional front door: a CloudFront distribution (HTTPS only, nothing cached, every header but
 * Host forwarded, so `Authorization` and `Idempotency-Key` reach the API) with the firewall's web
 * ACL, in front of the HTTP API (which takes neither WAF nor usage plans). CloudFront adds a secret
 * header to every request it forwards; the API functions refuse requests without it, so the
 * execute-api URL cannot be used to go around the firewall. The secret is generated in Secrets
 * Manager and resolved by CloudFormation at deploy time (never in the template); changing it means
 * a deploy.
 */
export class FrontDoor extends Construct {
  public readonly distribution: Distribution;
  public readonly secret: Secret;

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
        'CloudFront and the API functions read the secret when the stack deploys (a dynamic reference); a rotation ' +
        'would not reach them, so it is changed by a deploy instead.',
    });
    const secretValue = this.secret.secretValue.unsafeUnwrap();
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `${stack.stackName} API front door`,
      defaultBehavior: {
        origin: new HttpOrigin(`${props.api.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
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
          "The distribution uses CloudFront's default certificate (no custom domain), whose TLS policy CloudFront sets; " +
          'viewers are HTTPS only and the origin is reached over TLS 1.2.',
      },
    );
    props.api.onlyThrough(secretValue);
  }
}
