import { INDEXES } from './adapters/dynamodb/table.js';
import { BROADCAST_WORKERS } from './broadcasts/workers.js';
import { CONTACT_IMPORT_WORKERS } from './contact-imports/workers.js';
import { CONTACT_WORKERS } from './contacts/workers.js';
import { DOMAIN_WORKERS } from './domains/workers.js';
import { EMAIL_WORKERS } from './emails/workers.js';
import { METRICS_WORKERS } from './metrics/workers.js';
import { RECEIVING_WORKERS } from './receiving/workers.js';
import { LOG_WORKERS } from './request-logs/workers.js';
import { FALLBACK_HANDLER, ROUTES, type RouteHandler } from './routes.js';
import type {
  DynamoAction,
  EnvKey,
  FunctionAccess,
  IndexKey,
  SesConfigurationSetAction,
  SesIdentityAction,
  SesReceiptRuleAction,
  WorkerSpec,
} from './shared/function-spec.js';
import type { RouteDeclaration } from './shared/route.js';
import { UNSUBSCRIBE_WORKERS } from './unsubscribe/workers.js';
import { WEBHOOK_WORKERS } from './webhooks/workers.js';

export type { EnvKey } from './shared/function-spec.js';

/**
 * Every function of the service: the environment it reads (its wiring in wiring.ts loads exactly
 * these) and the AWS access its code uses, built from the declarations each concept keeps beside
 * its code: its routes (routes.ts) and its background functions (workers.ts). The CDK stack builds
 * each function from its entry, so a grant or a variable lives next to the code that needs it and
 * cannot drift from it unnoticed: a test compares each function's synthesized environment with
 * what its wiring reads, and another every AWS call its code makes with its synthesized role.
 *
 * How a function is triggered (a route, a queue, a schedule) is the stack's business, not this.
 */
type IndexName = (typeof INDEXES)[keyof typeof INDEXES]['name'];

export interface FunctionSpec extends FunctionAccess {
  /** What the function does, for the stack's descriptions. */
  readonly description: string;
  readonly env: readonly EnvKey[];
  /** DynamoDB actions on the table, and the indexes it queries (by name; none: no index). */
  readonly table: { readonly actions: readonly DynamoAction[]; readonly indexes?: readonly IndexName[] };
}

const indexNames = (keys: readonly IndexKey[] | undefined) =>
  keys ? { indexes: keys.map((key) => INDEXES[key].name) } : {};

/**
 * What every API function does first: find the caller's key, count the request against its rate
 * limit and record its use, in one UpdateItem of one of the key's rate shards (http/middleware.ts),
 * after one GetItem of it the first time an instance uses that shard (and, for a shard not created
 * yet, two UpdateItems that create it). A public page only answers: it reads nothing. A token page
 * reads what its access declares, with no key check.
 */
export function routeSpec(route: RouteDeclaration): FunctionSpec {
  const description = `${route.method} ${route.path}`;
  if (route.permission === 'public')
    return {
      description: `${description} (public)`,
      env: [],
      table: { actions: [] },
    };
  const { env = [], optionalEnv = [], actions = [], indexes, ...rest } = route.access ?? {};
  // A token page checks no key: it reads what its token opens, and only that (http/token.ts).
  if (route.permission === 'token')
    return {
      ...rest,
      description: `${description} (token)`,
      env: ['TABLE_NAME', ...env],
      ...(optionalEnv.length ? { optionalEnv } : {}),
      table: { actions: [...new Set<DynamoAction>(actions)], ...indexNames(indexes) },
    };
  return {
    ...rest,
    description,
    env: ['TABLE_NAME', 'RATE_LIMIT_PER_SECOND', ...env],
    optionalEnv: ['REQUEST_LOGS', 'REQUEST_LOG_BODIES', ...optionalEnv],
    table: {
      actions: [...new Set<DynamoAction>(['GetItem', 'UpdateItem', ...actions])],
      ...indexNames(indexes),
    },
  };
}

/** A background function's entry. */
export function workerSpec(worker: WorkerSpec): FunctionSpec {
  const { table, ...rest } = worker;
  return { ...rest, table: { actions: table.actions, ...indexNames(table.indexes) } };
}

/** The fallback: the key check every API function makes, and nothing else. */
const FALLBACK: RouteDeclaration = {
  handler: FALLBACK_HANDLER,
  method: 'GET',
  path: '$default',
  permission: 'full_access',
  summary: 'Every request no route matches: 401, 404 or 405',
};

/** Each concept's background functions, by the concept's folder. */
export const WORKERS_BY_CONCEPT = {
  emails: EMAIL_WORKERS,
  domains: DOMAIN_WORKERS,
  webhooks: WEBHOOK_WORKERS,
  metrics: METRICS_WORKERS,
  'request-logs': LOG_WORKERS,
  receiving: RECEIVING_WORKERS,
  contacts: CONTACT_WORKERS,
  'contact-imports': CONTACT_IMPORT_WORKERS,
  unsubscribe: UNSUBSCRIBE_WORKERS,
  broadcasts: BROADCAST_WORKERS,
} as const satisfies Record<string, Record<string, WorkerSpec>>;

/** The background functions, concept by concept. */
export const WORKERS = {
  ...EMAIL_WORKERS,
  ...DOMAIN_WORKERS,
  ...WEBHOOK_WORKERS,
  ...METRICS_WORKERS,
  ...LOG_WORKERS,
  ...RECEIVING_WORKERS,
  ...CONTACT_WORKERS,
  ...CONTACT_IMPORT_WORKERS,
  ...UNSUBSCRIBE_WORKERS,
  ...BROADCAST_WORKERS,
} as const satisfies Record<string, WorkerSpec>;

export type FunctionName = RouteHandler | typeof FALLBACK_HANDLER | keyof typeof WORKERS;

/** The catalog of these routes and workers: the routes' functions, the fallback, then the workers. */
export function buildCatalog(
  routes: readonly RouteDeclaration[],
  workers: Readonly<Record<string, WorkerSpec>>,
): Record<string, FunctionSpec> {
  const catalog: Record<string, FunctionSpec> = {};
  for (const route of routes) catalog[route.handler] = routeSpec(route);
  catalog[FALLBACK_HANDLER] = { ...routeSpec(FALLBACK), description: FALLBACK.summary };
  for (const [name, worker] of Object.entries(workers)) catalog[name] = workerSpec(worker);
  return catalog;
}

export const FUNCTIONS = buildCatalog(ROUTES, WORKERS) as Readonly<Record<FunctionName, FunctionSpec>>;

/**
 * The functions run on a schedule (EventBridge every minute on AWS; timers locally), one job each,
 * each with its own timeout and errors: the domain check, the scheduler of scheduled emails, the
 * sweeper, the parked webhook retries and the metrics' roll-up.
 */
export const SCHEDULED_FUNCTIONS = [
  'check-domains',
  'dispatch-scheduled',
  'sweep-emails',
  'requeue-webhook-retries',
  'roll-up-metrics',
] as const satisfies readonly FunctionName[];

/**
 * How S3 answers this caller's read of a missing object: 403 AccessDenied to one of the service's
 * functions (no role here has s3:ListBucket: see FunctionAccess.content; the grants test holds the
 * template to it), 404 to anyone else (an administrator's own credentials, which may list).
 */
export function missingObjectStatus(caller: string | undefined): 403 | 404 {
  return caller !== undefined && caller in FUNCTIONS ? 403 : 404;
}

/**
 * Whether this caller's role may make this SES call (ses:<action>), from its catalog entry, as the
 * stack grants it. Undefined: not one of the service's functions (an administrator's credentials).
 */
export function sesAllows(caller: string | undefined, action: string): boolean {
  const spec = caller === undefined ? undefined : (FUNCTIONS as Record<string, FunctionSpec>)[caller];
  if (!spec) return true;
  switch (action) {
    case 'SendEmail':
      return spec.sendsEmail === true;
    // An SES v2 SendEmail with raw content (an SMTP email) is authorised as ses:SendRawEmail.
    case 'SendRawEmail':
      return spec.sendsEmail === true && spec.sendsRawEmail === true;
    case 'GetAccount':
      return spec.sesAccount === true;
    case 'DeleteSuppressedDestination':
      return spec.sesSuppressions === true;
    default:
      return (
        (spec.identities ?? []).includes(action as SesIdentityAction) ||
        (spec.configurationSets ?? []).includes(action as SesConfigurationSetAction) ||
        (spec.receiptRules ?? []).includes(action as SesReceiptRuleAction)
      );
  }
}

/** The spec of a route's function; a route without one fails the synth rather than deploy without access. */
export function specOf(name: string): FunctionSpec {
  const spec = (FUNCTIONS as Record<string, FunctionSpec>)[name];
  if (!spec) throw new Error(`functions/catalog.ts has no entry for the function "${name}"`);
  return spec;
}

/** The route handlers and the fallback: every API function. */
export const API_FUNCTIONS = [...ROUTES.map((route) => route.handler), FALLBACK_HANDLER];
