import { Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { ConceptStacks } from './concept-stacks.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface DomainCheckProps {
  readonly resources: ServiceResources;
  /** How often pending domains are re-read from SES (verified ones once an hour). @default 1 minute */
  readonly every?: Duration;
  /** Where its function is deployed (in its concept's stack). */
  readonly functions: ConceptStacks;
}

/** The scheduled re-check of sending domains' verification, so their status moves without anyone asking. */
export class DomainCheck extends Construct {
  public readonly checker: ServiceFunction;

  constructor(scope: Construct, id: string, props: DomainCheckProps) {
    super(scope, id);
    this.checker = props.functions
      .add('check-domains', { timeout: Duration.seconds(60) })
      .bind(props.resources);
    this.checker.runEvery(
      props.every ?? Duration.minutes(1),
      'Re-checks the DNS verification of pending sending domains',
    );
  }
}
