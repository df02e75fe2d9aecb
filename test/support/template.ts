import { App, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EmailServiceStack, type EmailServiceStackProps } from '../../lib/email-service-stack.js';

/** The stack synthesized without bundling (the template is what these tests are about). */
export function synthStack(props: EmailServiceStackProps = {}, id = 'Test') {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new EmailServiceStack(app, id, {
    env: { account: '123456789012', region: 'us-east-1' },
    ...props,
  });
  return { stack, template: Template.fromStack(stack) };
}

export type Resource = { Type: string; Properties: Record<string, unknown> };
export type Statement = { Effect?: string; Action: string | string[]; Resource: unknown };

export const resourcesOf = (template: Template, type: string) =>
  template.findResources(type) as Record<string, Resource>;

/** Every policy statement attached to a function's role, as synthesized. */
export function policiesOf(stack: EmailServiceStack, template: Template, functionName: string): Statement[] {
  const fn = stack.functions[functionName];
  if (!fn) throw new Error(`no function ${functionName}`);
  const roleId = logicalId(stack, fn.role as never);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** Every IAM action a function's role allows, sorted. */
export const actionsOf = (stack: EmailServiceStack, template: Template, functionName: string): string[] =>
  [...new Set(policiesOf(stack, template, functionName).flatMap((s) => [s.Action].flat()))].sort();

/** The logical id CloudFormation knows a construct's resource by. */
export const logicalId = (stack: Stack, construct: { node: { defaultChild?: unknown } }): string =>
  stack.resolve((construct.node.defaultChild as CfnElement).logicalId);
