import { NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_FUNCTIONS, FUNCTIONS, type FunctionName } from '../../functions/catalog.js';
import { type Concept, conceptOf } from '../concepts.js';
import { keepLogicalId, logGroupIdOf } from '../legacy-ids.js';
import { type FunctionLogging, ServiceFunction, type ServiceFunctionProps } from './service-function.js';

export interface ConceptStacksProps {
  /** How the functions log: their log groups' retention, and the least level. @default 30 days, INFO */
  readonly logging?: FunctionLogging;
  /**
   * The retention of the log groups that receive request-log lines (the API functions': those that
   * read the REQUEST_LOGS setting), which show requests (lib/request-log-retention.ts).
   * @default logging.retention
   */
  readonly requestLogLineRetention?: RetentionDays;
}

/** Whether a function writes request-log lines to its log group (docs/logs.md): it reads REQUEST_LOGS. */
export const writesRequestLogLines = (name: FunctionName): boolean =>
  FUNCTIONS[name].optionalEnv?.includes('REQUEST_LOGS') === true;

/**
 * Where each function is deployed: a nested stack per concept (lib/concepts.ts) holds that
 * concept's functions and what each owns (role, policy, schedule, event source mapping,
 * subscription filter, its API integration), so the parent template does not grow by a function's
 * resources; each function's log group stays here, in the parent, under the id it has always had
 * (lib/legacy-ids.ts), so no deploy deletes a function's logs, whichever stack the function moves
 * to. A concept's stack is made with its first function. Defaults: log groups kept 30 days.
 */
export class ConceptStacks extends Construct {
  private readonly madeStacks = new Map<Concept, NestedStack>();
  private readonly madeLogGroups = new Map<FunctionName, LogGroup>();
  /** Each concept's nested stack, once it has a function. */
  public readonly stacks: ReadonlyMap<Concept, NestedStack> = this.madeStacks;
  /** Each function's log group (in the parent). */
  public readonly logGroups: ReadonlyMap<FunctionName, LogGroup> = this.madeLogGroups;
  private readonly logging: FunctionLogging | undefined;
  private readonly requestLogLineRetention: RetentionDays | undefined;

  constructor(scope: Construct, id: string, props: ConceptStacksProps = {}) {
    super(scope, id);
    this.logging = props.logging;
    this.requestLogLineRetention = props.requestLogLineRetention;
  }

  /** The concept's nested stack (made on first use). */
  stackOf(concept: Concept): NestedStack {
    let stack = this.stacks.get(concept);
    if (!stack) {
      const id = concept
        .split('-')
        .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
        .join('');
      stack = new NestedStack(this, id, {
        description: `${Stack.of(this).stackName}: the ${concept} functions`,
      });
      this.madeStacks.set(concept, stack);
    }
    return stack;
  }

  /** The function `name`, in its concept's stack, writing to its log group here. */
  add(name: FunctionName, props: Omit<ServiceFunctionProps, 'name' | 'logGroup' | 'logging'> = {}) {
    const retention = this.logging?.retention ?? RetentionDays.ONE_MONTH;
    const logGroup = new LogGroup(this, `${name}-logs`, {
      retention: writesRequestLogLines(name) ? (this.requestLogLineRetention ?? retention) : retention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const id = logGroupIdOf(name, { route: API_FUNCTIONS.includes(name) });
    if (id) keepLogicalId(logGroup, id);
    this.madeLogGroups.set(name, logGroup);
    return new ServiceFunction(this.stackOf(conceptOf(name)), name, {
      ...props,
      name,
      logging: this.logging,
      logGroup,
    });
  }
}
