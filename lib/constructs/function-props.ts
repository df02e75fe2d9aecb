import type { Duration } from 'aws-cdk-lib';
import type { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { FunctionName, FunctionSpec } from '../../functions/catalog.js';

/** How a function logs: its log group's retention, and the least level written. */
export interface FunctionLogging {
  /** @default RetentionDays.ONE_MONTH */
  readonly retention?: RetentionDays;
  /** Powertools' POWERTOOLS_LOG_LEVEL. @default 'INFO' */
  readonly level?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

export interface ServiceFunctionProps {
  /** The handler module in functions/handlers/, and its entry in functions/catalog.ts. */
  readonly name: FunctionName;
  /** How long its logs are kept (in a log group of its own), and from which level. */
  readonly logging?: FunctionLogging;
  /**
   * The log group it writes to, made elsewhere (the stack keeps every function's log group in the
   * parent template, so a function moving between stacks keeps its logs). Its retention is the group's.
   * @default a log group of its own, kept `logging.retention`
   */
  readonly logGroup?: LogGroup;
  /** @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  /**
   * The service name in logs and the dimension of its metrics.
   * @default the name of the stack it is deployed with (the parent's, for a nested stack)
   */
  readonly serviceName?: string;
  /** The namespace of its metrics. @default 'EmailService' */
  readonly metricsNamespace?: string;
  /** What its code reads and calls (tests bind an access no function declares yet). @default its catalog entry */
  readonly spec?: FunctionSpec;
}
