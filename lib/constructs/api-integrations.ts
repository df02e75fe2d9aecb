import { Stack } from 'aws-cdk-lib';
import {
  HttpIntegration,
  HttpIntegrationType,
  type IHttpApi,
  IntegrationCredentials,
  PayloadFormatVersion,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/**
 * Most functions one role may invoke: IAM limits a role's inline policies to 10,240 characters
 * (whitespace aside), and a function's ARN takes up to 126 (64 for its name, the rest for the
 * partition, region and account, its quotes and comma): 60 leave room for the statement around them.
 */
export const MAX_INVOKED_FUNCTIONS = 60;

export interface ApiIntegrationsProps {
  /** The HTTP API the integrations belong to (it may be in another stack: its id is passed in). */
  readonly api: IHttpApi;
}

/**
 * The API's way into the functions of one stack: one role API Gateway assumes to invoke them,
 * allowed `lambda:InvokeFunction` on exactly these functions, and a Lambda proxy integration
 * (payload 2.0) per function that names it as its credentials. One role for the stack instead of
 * a resource-based permission per function (what `HttpLambdaIntegration` adds): a route costs one
 * resource fewer. Only an integration made in this account by someone allowed to pass the role
 * can use it (IAM does not pass roles across accounts). Defaults: none; at most
 * MAX_INVOKED_FUNCTIONS functions (the role's policy size).
 */
export class ApiIntegrations extends Construct {
  /** The role API Gateway assumes to invoke the functions. */
  public readonly role: Role;
  private readonly invoke: PolicyStatement;
  private readonly api: IHttpApi;
  private count = 0;

  constructor(scope: Construct, id: string, props: ApiIntegrationsProps) {
    super(scope, id);
    this.api = props.api;
    this.role = new Role(this, 'InvokeRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: `Lets the API invoke the functions of ${Stack.of(this).node.id}`,
    });
    this.invoke = new PolicyStatement({ actions: ['lambda:InvokeFunction'] });
  }

  /** A Lambda proxy integration of the API with this function, and the role allowed to invoke it. */
  integrate(id: string, fn: IFunction): HttpIntegration {
    if (++this.count > MAX_INVOKED_FUNCTIONS)
      throw new Error(
        `${this.node.path}: one role invokes at most ${MAX_INVOKED_FUNCTIONS} functions (IAM's 10,240 characters of inline policy); split the stack`,
      );
    if (this.count === 1) this.role.addToPolicy(this.invoke);
    this.invoke.addResources(fn.functionArn);
    return new HttpIntegration(this, id, {
      httpApi: this.api,
      integrationType: HttpIntegrationType.AWS_PROXY,
      integrationUri: fn.functionArn,
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      credentials: IntegrationCredentials.fromRole(this.role),
    });
  }
}
