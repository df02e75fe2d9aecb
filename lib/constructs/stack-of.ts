import { type CfnElement, Names, Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/** The stack a construct is deployed with: its own, or for a nested stack, the top-level one. */
export function deployedStack(scope: Construct): Stack {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack;
}

/**
 * How cdk-nag shows a resource's attribute in a finding of `scope`'s stack: `<Id.Attribute>` in its
 * own stack; from a nested stack, the parameter CDK passes it as (`reference-to-` and the resource's
 * unique id and attribute, alphanumerics only).
 */
export function nagReference(scope: Construct, resource: CfnElement, attribute: string): string {
  const stack = Stack.of(scope);
  if (resource.stack === stack) return `<${stack.getLogicalId(resource)}.${attribute}>`;
  return `<referenceto${Names.nodeUniqueId(resource.node)}${attribute}>`;
}
