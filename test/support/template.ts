import { App, type CfnElement, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EmailServiceStack, type EmailServiceStackProps } from '../../lib/email-service-stack.js';

/**
 * The stack synthesized without bundling (the template is what these tests are about): `template`
 * is the whole deployment read as one (see templateOf), `templates` what CloudFormation gets.
 */
/** The front door's origin settings the tests deploy it with (an issued certificate is assumed). */
export const FRONT_DOOR_ORIGIN = {
  originDomainName: 'api-origin.example.com',
  originCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0',
} as const;

export function synthStack(props: EmailServiceStackProps = {}, id = 'Test') {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new EmailServiceStack(app, id, {
    env: { account: '123456789012', region: 'us-east-1' },
    ...props,
  });
  return { stack, template: templateOf(stack), templates: templatesOf(stack) };
}

type Json = Record<string, unknown>;
type TemplateJson = {
  Resources: Record<string, Json>;
  Parameters?: Record<string, unknown>;
  Outputs?: Record<string, { Value: unknown }>;
};

/** Each template of a stack, as synthesized: its own (under its path), then each nested stack's. */
export function templatesOf(stack: Stack): Map<string, Template> {
  const templates = new Map([[stack.node.path, Template.fromStack(stack)]]);
  for (const nested of nestedStacksOf(stack)) templates.set(nested.node.path, Template.fromStack(nested));
  return templates;
}

const nestedStacksOf = (stack: Stack): NestedStack[] =>
  stack.node
    .findAll()
    .filter((c): c is NestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === stack);

/**
 * The deployment as one template, as if nothing were nested: the parent's resources and each
 * nested stack's (under the ids they have in their own template), with every parameter a nested
 * stack reads replaced by the value the parent passes it, and every output of a nested stack the
 * parent reads replaced by its value. So a reference reads as it did in one template (the table's
 * ARN as `{"Fn::GetAtt": ["TableCD117FA1", "Arn"]}` in a nested function's policy), and what a test
 * asserts of it also holds the wiring between the stacks. Fails if two templates use one id.
 */
export function templateOf(stack: Stack): Template {
  const parent = Template.fromStack(stack).toJSON() as TemplateJson;
  const nested = new Map<string, { template: TemplateJson; parameters: Json }>();
  for (const child of nestedStacksOf(stack)) {
    const resourceId = stack.resolve((child.nestedStackResource as CfnElement).logicalId) as string;
    const resource = parent.Resources[resourceId] as { Properties?: { Parameters?: Json } };
    nested.set(resourceId, {
      template: Template.fromStack(child).toJSON() as TemplateJson,
      parameters: resource.Properties?.Parameters ?? {},
    });
  }
  /** A value of the parent, with the nested stacks' outputs it reads replaced by their values. */
  const inParent = (value: unknown): unknown =>
    rewrite(value, (node) => {
      const getAtt = node['Fn::GetAtt'];
      if (!Array.isArray(getAtt) || !nested.has(getAtt[0])) return undefined;
      const output = String(getAtt[1]).replace(/^Outputs\./, '');
      const child = nested.get(getAtt[0]);
      const produced = child?.template.Outputs?.[output];
      if (!produced) throw new Error(`${getAtt[0]} has no output ${output}`);
      return inNested(getAtt[0], produced.Value);
    });
  /** A value of a nested stack, with its parameters replaced by what the parent passes. */
  const inNested = (resourceId: string, value: unknown): unknown =>
    rewrite(value, (node) => {
      const child = nested.get(resourceId);
      const ref = node.Ref;
      if (typeof ref !== 'string' || !child || !(ref in child.parameters)) return undefined;
      return inParent(child.parameters[ref]);
    });

  const resources: Record<string, unknown> = {};
  for (const [id, resource] of Object.entries(parent.Resources)) resources[id] = inParent(resource);
  for (const [resourceId, { template }] of nested)
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (id in resources) throw new Error(`two templates have a resource ${id}`);
      resources[id] = inNested(resourceId, resource);
    }
  return Template.fromJSON({ ...parent, Resources: resources, Outputs: inParent(parent.Outputs ?? {}) });
}

/** `value` with each object `replace` answers for replaced (deeply); the others rewritten within. */
function rewrite(value: unknown, replace: (node: Json) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, replace));
  if (value === null || typeof value !== 'object') return value;
  const replaced = replace(value as Json);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rewrite(item, replace)]));
}

export type Resource = { Type: string; Properties: Record<string, unknown> };
export type Statement = { Effect?: string; Action: string | string[]; Resource: unknown };

export const resourcesOf = (template: Template, type: string) =>
  template.findResources(type) as Record<string, Resource>;

/** Every policy statement attached to a function's role, as synthesized (in the one-template view). */
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

/**
 * The logical id CloudFormation knows a construct's resource by, in its own template (the
 * parent's or a nested stack's; the one-template view keeps them).
 */
export const logicalId = (_stack: Stack, construct: { node: { defaultChild?: unknown } }): string => {
  const element = construct.node.defaultChild as CfnElement;
  return element.stack.resolve(element.logicalId);
};

/**
 * What a resource of the parent depends on for `construct` to be in place: the construct's own
 * resource when it is in the parent's template; else the nested stack resource that deploys it
 * (CloudFormation finishes a nested stack, every resource in it, before what depends on it).
 */
export function deployedBy(construct: { node: { defaultChild?: unknown } }): string {
  const element = construct.node.defaultChild as CfnElement;
  const stack = element.stack;
  if (!NestedStack.isNestedStack(stack)) return stack.resolve(element.logicalId);
  const resource = stack.nestedStackResource as CfnElement;
  return resource.stack.resolve(resource.logicalId);
}
