import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import type { FunctionName } from '../../functions/catalog.js';
import { type FunctionLogging, ServiceFunction, type ServiceResources } from './service-function.js';

export interface ScheduledFunctionProps {
  /** The function (its entry in functions/catalog.ts). */
  readonly name: FunctionName;
  /** What the schedule does, for its description. */
  readonly description: string;
  readonly resources: ServiceResources;
  /** How often it runs. @default 1 minute */
  readonly every?: Duration;
  /** Its timeout: the run's time budget. @default 60 seconds */
  readonly timeout?: Duration;
  /** How it logs. @default 30 days, INFO */
  readonly logging?: FunctionLogging;
}

/**
 * A function run on a schedule (EventBridge), one job each: its own timeout, its own errors and
 * alarm (Monitoring watches it), never retried by EventBridge (the next run is the retry).
 */
export class ScheduledFunction extends Construct {
  public readonly fn: ServiceFunction;

  constructor(scope: Construct, id: string, props: ScheduledFunctionProps) {
    super(scope, id);
    this.fn = new ServiceFunction(this, 'Function', {
      name: props.name,
      logging: props.logging,
      timeout: props.timeout ?? Duration.seconds(60),
    }).bind(props.resources);
    new Rule(this, 'Schedule', {
      description: props.description,
      schedule: Schedule.rate(props.every ?? Duration.minutes(1)),
      targets: [new LambdaFunction(this.fn.function, { retryAttempts: 0 })],
    });
  }
}
