import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { type FunctionLogging, ServiceFunction, type ServiceResources } from './service-function.js';

export interface DomainCheckProps {
  readonly resources: ServiceResources;
  /** How often pending domains are re-read from SES (verified ones once an hour). @default 1 minute */
  readonly every?: Duration;
  /** How its functions log. @default 30 days, INFO */
  readonly logging?: FunctionLogging;
}

/** The scheduled re-check of sending domains' verification, so their status moves without anyone asking. */
export class DomainCheck extends Construct {
  public readonly checker: ServiceFunction;

  constructor(scope: Construct, id: string, props: DomainCheckProps) {
    super(scope, id);
    this.checker = new ServiceFunction(this, 'Checker', {
      name: 'check-domains',
      logging: props.logging,
      timeout: Duration.seconds(60),
    }).bind(props.resources);
    new Rule(this, 'Schedule', {
      description: 'Re-checks the DNS verification of pending sending domains',
      schedule: Schedule.rate(props.every ?? Duration.minutes(1)),
      targets: [new LambdaFunction(this.checker.function, { retryAttempts: 0 })],
    });
  }
}
