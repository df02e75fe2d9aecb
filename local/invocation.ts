import { AsyncLocalStorage } from 'node:async_hooks';
import { useClientPlugin } from '../functions/adapters/aws-clients.js';

/**
 * Which function is running, locally, where every function shares one process: the gateway, the
 * queue pollers and the schedule timers run each invocation inside `runAs(name, …)`. On AWS each
 * function has its own process and role; here this is what lets a test tell whose call is whose.
 */
const current = new AsyncLocalStorage<string>();

export const runAs = <T>(functionName: string, work: () => T): T => current.run(functionName, work);

export const currentFunction = (): string | undefined => current.getStore();

/** Runs work as the local runtime itself, outside any function (its calls are no function's). */
export const asRuntime = <T>(work: () => T): T => current.exit(work);

/** Invocations of each function so far in this process, and their time (for `npm run bench`). */
const invocations = new Map<string, { count: number; totalMs: number }>();

/**
 * Runs one invocation of a function (a request, a batch, a scheduled run) as that function, and
 * counts it and its time, as Lambda bills them.
 */
export async function invoke<T>(functionName: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await runAs(functionName, work);
  } finally {
    const stats = invocations.get(functionName) ?? { count: 0, totalMs: 0 };
    stats.count++;
    stats.totalMs += performance.now() - started;
    invocations.set(functionName, stats);
  }
}

/** Invocations and their total time by function, since the process started. */
export const invocationStats = (): Record<string, { count: number; totalMs: number }> =>
  Object.fromEntries([...invocations].map(([name, stats]) => [name, { ...stats }]));

/** One AWS call, as made by a function: what IAM authorises it against. */
export interface RecordedCall {
  /** The function whose role makes the call (for an SQS trigger: the function the poller feeds). */
  functionName: string;
  /** `DynamoDB`, `SQS`, `SESv2`, `SES` (v1: receipt rules) or `S3`. */
  service: string;
  /** The API operation, e.g. `GetItem`. */
  operation: string;
  /** The parameters that name the resources it touches. */
  tableName?: string;
  /**
   * DynamoDB TransactWriteItems/TransactGetItems: the operation of each item (`Put`, `Update`,
   * `Delete`, `ConditionCheck`, `Get`), which IAM authorises one by one.
   */
  transactItems?: string[];
  indexName?: string;
  queueUrl?: string;
  configurationSetName?: string;
  /** Secrets Manager: the secret's id (through the Parameters and Secrets extension or its API). */
  secretId?: string;
  /** SES CreateEmailIdentity with tags also needs ses:TagResource. */
  tagged?: boolean;
  /** SES v2 SendEmail with raw content: authorised as ses:SendRawEmail. */
  raw?: boolean;
  /** S3: the bucket and the object's key; a listing's prefix. */
  bucket?: string;
  key?: string;
  prefix?: string;
  /**
   * DynamoDB TransactWriteItems: the IAM action each of its items is authorised as (AWS's "Using
   * IAM with DynamoDB transactions": Put → PutItem, Update → UpdateItem, Delete → DeleteItem,
   * ConditionCheck → ConditionCheckItem); there is no dynamodb:TransactWriteItems action.
   */
  itemActions?: string[];
}

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/** The actions a TransactWriteItems' items are authorised as (undefined: not a transaction). */
export function transactItemActions(input: Record<string, unknown>): string[] | undefined {
  if (!Array.isArray(input.TransactItems)) return undefined;
  const kinds = (input.TransactItems as Record<string, unknown>[]).flatMap((item) => Object.keys(item));
  return [...new Set(kinds.map((kind) => TRANSACT_ACTIONS[kind] ?? kind))];
}

/**
 * Records every AWS call made inside a `runAs` from now on, through middleware on every client
 * (see adapters/aws-clients.ts). Calls made outside any function (the local runtime's own setup)
 * are not recorded. Returns the list, which keeps growing, and a function that stops recording.
 */
export function recordAwsCalls(): { calls: RecordedCall[]; stop(): void } {
  const calls: RecordedCall[] = [];
  const stop = useClientPlugin({
    applyToStack(stack) {
      stack.add(
        (next: (args: unknown) => Promise<unknown>, context: { clientName?: string; commandName?: string }) =>
          async (args: { input?: Record<string, unknown> }) => {
            const functionName = currentFunction();
            if (functionName) calls.push(describe(functionName, context, args.input ?? {}));
            return next(args);
          },
        { step: 'initialize', name: 'recordAwsCalls' },
      );
    },
  });
  return { calls, stop };
}

function describe(
  functionName: string,
  context: { clientName?: string; commandName?: string },
  input: Record<string, unknown>,
): RecordedCall {
  const service = (context.clientName ?? 'Unknown').replace(/Client$/, '');
  const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
  const call: RecordedCall = { functionName, service, operation };
  const requestItems = input.RequestItems as Record<string, unknown> | undefined;
  const transactItems = Array.isArray(input.TransactItems)
    ? (input.TransactItems as Record<string, { TableName?: string }>[])
    : undefined;
  if (transactItems) call.transactItems = transactItems.flatMap((item) => Object.keys(item));
  const tableName =
    input.TableName ??
    (requestItems ? Object.keys(requestItems)[0] : undefined) ??
    transactItems?.flatMap((item) => Object.values(item).map((op) => op.TableName))[0];
  if (typeof tableName === 'string') call.tableName = tableName;
  const itemActions = transactItemActions(input);
  if (itemActions) call.itemActions = itemActions;
  if (typeof input.IndexName === 'string') call.indexName = input.IndexName;
  if (typeof input.QueueUrl === 'string') call.queueUrl = input.QueueUrl;
  if (typeof input.ConfigurationSetName === 'string') call.configurationSetName = input.ConfigurationSetName;
  if (Array.isArray(input.Tags) && input.Tags.length > 0) call.tagged = true;
  if ((input.Content as { Raw?: unknown } | undefined)?.Raw) call.raw = true;
  if (typeof input.Bucket === 'string') call.bucket = input.Bucket;
  if (typeof input.Key === 'string') call.key = input.Key;
  if (typeof input.Prefix === 'string') call.prefix = input.Prefix;
  return call;
}
