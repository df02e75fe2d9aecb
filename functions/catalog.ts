import { INDEXES } from './adapters/dynamodb/table.js';
import { FALLBACK_HANDLER, ROUTES } from './routes.js';
import type { Config } from './shared/config.js';

/**
 * Every function of the service: the environment it reads (its wiring in wiring.ts loads exactly
 * these) and the AWS access its code uses. The CDK stack builds each function from its entry, as it
 * builds routes from the route table, so a grant or a variable lives next to the code that needs it
 * and cannot drift from it unnoticed: a test compares each function's synthesized environment with
 * what its wiring reads, and another every AWS call its code makes with its synthesized role.
 *
 * How a function is triggered (a route, a queue, a schedule) is the stack's business, not this.
 */
export type EnvKey = keyof Config;
type DynamoAction =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'BatchGetItem'
  | 'BatchWriteItem';
type IndexName = (typeof INDEXES)[keyof typeof INDEXES]['name'];
type SqsAction = 'SendMessage' | 'ReceiveMessage' | 'GetQueueAttributes' | 'ChangeMessageVisibility';
type ContentAction = 's3:PutObject' | 's3:GetObject' | 's3:AbortMultipartUpload';
/** The content bucket's prefixes (functions/emails/attachments.ts names the keys under them). */
type ContentPrefix = 'attachments/' | 'bodies/';
type SesIdentityAction =
  | 'CreateEmailIdentity'
  | 'TagResource'
  | 'GetEmailIdentity'
  | 'PutEmailIdentityMailFromAttributes'
  | 'DeleteEmailIdentity';
type SesConfigurationSetAction =
  | 'CreateConfigurationSet'
  | 'TagResource'
  | 'PutConfigurationSetDeliveryOptions'
  | 'PutConfigurationSetTrackingOptions'
  | 'CreateConfigurationSetEventDestination'
  | 'UpdateConfigurationSetEventDestination'
  | 'DeleteConfigurationSet';

export interface FunctionSpec {
  /** What the function does, for the stack's descriptions. */
  readonly description: string;
  /** Environment variables its wiring reads (all of them set by the stack, none left to a default). */
  readonly env: readonly EnvKey[];
  /** Variables it also reads, set only where a setting turns a feature on (absent: off). */
  readonly optionalEnv?: readonly EnvKey[];
  /** DynamoDB actions on the table, and the indexes it queries (by name; none: no index). */
  readonly table: { readonly actions: readonly DynamoAction[]; readonly indexes?: readonly IndexName[] };
  /** Actions on the send queue and on its dead-letter queue. */
  readonly sendQueue?: readonly SqsAction[];
  readonly sendDeadLetters?: readonly SqsAction[];
  /** Hands emails to SES (ses:SendEmail, with this stack's configuration set). */
  readonly sendsEmail?: true;
  /** SES identity actions (sending domains). */
  readonly identities?: readonly SesIdentityAction[];
  /** SES actions on domains' own configuration sets (named by the stack's prefix). */
  readonly configurationSets?: readonly SesConfigurationSetAction[];
  /** Takes addresses off SES's account-level suppression list (ses:DeleteSuppressedDestination). */
  readonly sesSuppressions?: true;
  /** Reads the account's sending limits (ses:GetAccount). */
  readonly sesAccount?: true;
  /** Actions on the webhook delivery queue (publishing events; the delivery function's retries). */
  readonly webhookQueue?: readonly SqsAction[];
  /**
   * S3 actions on the content bucket, per key prefix (granted on `<prefix>*` only). There is no
   * s3:ListBucket among them (no function lists the bucket), so on AWS a read of a missing object
   * answers 403 AccessDenied rather than 404 NoSuchKey; the local S3 answers the same
   * (missingObjectStatus below), and the content store takes either as "missing".
   */
  readonly content?: { readonly [P in ContentPrefix]?: readonly ContentAction[] };
}

/**
 * What every API function does first: find the caller's key, count the request against its rate
 * limit and record its use, in one UpdateItem of one of the key's rate shards (http/middleware.ts),
 * after one GetItem of it the first time an instance uses that shard (and, for a shard not created
 * yet, two UpdateItems that create it).
 */
function api<const E extends readonly EnvKey[] = readonly []>(
  spec: Omit<FunctionSpec, 'env' | 'table' | 'optionalEnv'> & {
    env?: E;
    optionalEnv?: readonly EnvKey[];
    actions?: readonly DynamoAction[];
    indexes?: readonly IndexName[];
  },
) {
  const { env, optionalEnv = [], actions = [], indexes, ...rest } = spec;
  return {
    ...rest,
    optionalEnv: ['FRONT_DOOR_SECRET', 'REQUEST_LOGS', ...optionalEnv] as readonly EnvKey[],
    env: ['TABLE_NAME', 'RATE_LIMIT_PER_SECOND', ...(env ?? [])] as unknown as readonly [
      'TABLE_NAME',
      'RATE_LIMIT_PER_SECOND',
      ...E,
    ],
    table: {
      actions: [...new Set<DynamoAction>(['GetItem', 'UpdateItem', ...actions])],
      ...(indexes ? { indexes } : {}),
    },
  } satisfies FunctionSpec;
}

const READ_IDENTITY: readonly SesIdentityAction[] = ['GetEmailIdentity'];

/**
 * What a function that brings a domain's configuration set to its settings calls (adapters/ses/
 * configuration-sets.ts): create it (tagged) or update its options, and its event destination.
 */
const PUT_CONFIGURATION_SET: readonly SesConfigurationSetAction[] = [
  'CreateConfigurationSet',
  'TagResource',
  'PutConfigurationSetDeliveryOptions',
  'PutConfigurationSetTrackingOptions',
  'CreateConfigurationSetEventDestination',
  'UpdateConfigurationSetEventDestination',
];

/** The settings every domain function reads to keep a domain's own configuration set. */
const DOMAIN_SETTINGS = {
  env: [
    'WEBHOOK_QUEUE_URL',
    'SES_EVENTS_TOPIC_ARN',
    'SES_MAX_DELIVERY_SECONDS',
    'DOMAIN_CONFIGURATION_SET_PREFIX',
  ],
  optionalEnv: ['TRACKING_HTTPS_TARGET', 'LOCAL_DNS_PUBLISHED'],
} as const;

/**
 * What a function that raises webhook events needs: the endpoints (one strongly consistent Query of
 * their partition per event raised) and the delivery queue (SendMessage, batched).
 */
const PUBLISHES = { webhookQueue: ['SendMessage'] } as const;

export const FUNCTIONS = {
  // The email's items and its idempotency key (claimed with PutItem, given back with DeleteItem);
  // the sender's domain and an email read back after a failed store (GetItem).
  // Attachments and large bodies go to the content bucket before the email is stored.
  'send-email': api({
    description: 'POST /v1/emails',
    env: ['SEND_QUEUE_URL', 'CONTENT_BUCKET', 'DEFLATE_BODIES'],
    optionalEnv: ['ATTACHMENT_ALLOW_LOOPBACK', 'TEMPLATE_CACHE_TTL_MS'],
    actions: ['BatchWriteItem', 'PutItem', 'DeleteItem', 'GetItem'],
    sendQueue: ['SendMessage'],
    content: { 'attachments/': ['s3:PutObject'], 'bodies/': ['s3:PutObject'] },
  }),
  'send-batch': api({
    description: 'POST /v1/emails/batch',
    env: ['SEND_QUEUE_URL', 'DEFLATE_BODIES'],
    optionalEnv: ['TEMPLATE_CACHE_TTL_MS'],
    actions: ['BatchWriteItem', 'BatchGetItem', 'PutItem', 'DeleteItem', 'GetItem'],
    sendQueue: ['SendMessage'],
  }),
  'list-emails': api({
    description: 'GET /v1/emails',
    actions: ['Query', 'BatchGetItem'],
    indexes: [INDEXES.emailsByTime.name, INDEXES.emailsByStatus.name],
  }),
  // The roll-up's mark (GetItem), the day items and the current hours' counter shards (Query);
  // the domains by id (GetItem) or all of them (Query) for their ids.
  'get-email-metrics': api({ description: 'GET /v1/emails/metrics', actions: ['GetItem', 'Query'] }),
  // Large bodies are read back from the content bucket.
  'get-email': api({
    description: 'GET /v1/emails/{id}',
    env: ['CONTENT_BUCKET'],
    actions: ['Query'],
    content: { 'bodies/': ['s3:GetObject'] },
  }),
  // A scheduled email's status item: read (GetItem), moved or ended with a conditional write
  // (UpdateItem); one due within the scheduler's look-ahead is queued (SendMessage, delayed).
  'update-email': api({
    description: 'PATCH /v1/emails/{id}',
    env: ['SEND_QUEUE_URL'],
    actions: ['GetItem', 'UpdateItem'],
    sendQueue: ['SendMessage'],
  }),
  'cancel-email': api({ description: 'POST /v1/emails/{id}/cancel', actions: ['GetItem', 'UpdateItem'] }),
  // The email's attachment records (GetItem of its body item); download links are presigned with
  // the function's own GetObject.
  'list-attachments': api({
    description: 'GET /v1/emails/{id}/attachments',
    env: ['CONTENT_BUCKET'],
    actions: ['GetItem'],
    content: { 'attachments/': ['s3:GetObject'] },
  }),
  'get-attachment': api({
    description: 'GET /v1/emails/{id}/attachments/{attachment_id}',
    env: ['CONTENT_BUCKET'],
    actions: ['GetItem'],
    content: { 'attachments/': ['s3:GetObject'] },
  }),
  'create-domain': api({
    description: 'POST /v1/domains',
    ...DOMAIN_SETTINGS,
    ...PUBLISHES,
    actions: ['PutItem', 'DeleteItem', 'Query'],
    identities: [
      'CreateEmailIdentity',
      'TagResource',
      'GetEmailIdentity',
      'PutEmailIdentityMailFromAttributes',
    ],
    // A new domain's set is named by its new id: only ever created, never found there already.
    configurationSets: ['CreateConfigurationSet', 'TagResource', 'CreateConfigurationSetEventDestination'],
  }),
  'list-domains': api({ description: 'GET /v1/domains', actions: ['Query'] }),
  // A read that finds SES's state (or DNS) changed stores it, over the version it read (GetItem
  // after a lost race), and brings the domain's configuration set along.
  'get-domain': api({
    description: 'GET /v1/domains/{id}',
    ...DOMAIN_SETTINGS,
    ...PUBLISHES,
    actions: ['GetItem', 'PutItem', 'Query'],
    identities: READ_IDENTITY,
    configurationSets: PUT_CONFIGURATION_SET,
  }),
  'verify-domain': api({
    description: 'POST /v1/domains/{id}/verify',
    ...DOMAIN_SETTINGS,
    ...PUBLISHES,
    actions: ['GetItem', 'PutItem', 'Query'],
    identities: READ_IDENTITY,
    configurationSets: PUT_CONFIGURATION_SET,
  }),
  'update-domain': api({
    description: 'PATCH /v1/domains/{id}',
    ...DOMAIN_SETTINGS,
    ...PUBLISHES,
    actions: ['GetItem', 'PutItem', 'Query'],
    configurationSets: PUT_CONFIGURATION_SET,
  }),
  // Its set is retired (PutItem), not deleted: the scheduled check deletes it later.
  'delete-domain': api({
    description: 'DELETE /v1/domains/{id}',
    ...DOMAIN_SETTINGS,
    ...PUBLISHES,
    actions: ['GetItem', 'DeleteItem', 'Query', 'PutItem'],
    identities: ['DeleteEmailIdentity'],
  }),
  // Templates: the template item (versioned PutItem, GetItem), its alias item (conditional
  // PutItem, GetItem, DeleteItem), its published version (PutItem, GetItem); listing (Query).
  'create-template': api({ description: 'POST /v1/templates', actions: ['PutItem', 'GetItem'] }),
  'list-templates': api({ description: 'GET /v1/templates', actions: ['Query'] }),
  'get-template': api({ description: 'GET /v1/templates/{id}', actions: ['GetItem'] }),
  'update-template': api({
    description: 'PATCH /v1/templates/{id}',
    actions: ['GetItem', 'PutItem', 'DeleteItem'],
  }),
  // The published version replaced by a tombstone (PutItem), the template and its alias deleted.
  'delete-template': api({
    description: 'DELETE /v1/templates/{id}',
    actions: ['GetItem', 'PutItem', 'DeleteItem'],
  }),
  'publish-template': api({
    description: 'POST /v1/templates/{id}/publish',
    actions: ['GetItem', 'PutItem'],
  }),
  'duplicate-template': api({
    description: 'POST /v1/templates/{id}/duplicate',
    actions: ['GetItem', 'PutItem'],
  }),
  'create-api-key': api({ description: 'POST /v1/api-keys', actions: ['PutItem'] }),
  'list-api-keys': api({ description: 'GET /v1/api-keys', actions: ['Query', 'BatchGetItem'] }),
  'update-api-key': api({ description: 'PATCH /v1/api-keys/{id}', actions: ['GetItem', 'UpdateItem'] }),
  // The key by id (GetItem), its lookup item deleted (returning the rate shards it names, each
  // overwritten with a tombstone: PutItem), then its listing item.
  'delete-api-key': api({
    description: 'DELETE /v1/api-keys/{id}',
    actions: ['GetItem', 'DeleteItem', 'PutItem'],
  }),
  // The list: an item per address (PutItem, conditional; GetItem for the one that stands), listed
  // through both listing indexes (Query, then BatchGetItem); by id through the first (Query).
  'add-suppression': api({ description: 'POST /v1/suppressions', actions: ['PutItem', 'GetItem'] }),
  'batch-add-suppressions': api({
    description: 'POST /v1/suppressions/batch/add',
    actions: ['PutItem', 'GetItem'],
  }),
  'list-suppressions': api({
    description: 'GET /v1/suppressions',
    actions: ['Query', 'BatchGetItem'],
    indexes: [INDEXES.emailsByTime.name, INDEXES.emailsByStatus.name],
  }),
  'get-suppression': api({
    description: 'GET /v1/suppressions/{id}',
    actions: ['GetItem', 'Query'],
    indexes: [INDEXES.emailsByTime.name],
  }),
  'delete-suppression': api({
    description: 'DELETE /v1/suppressions/{id}',
    actions: ['GetItem', 'Query', 'DeleteItem'],
    indexes: [INDEXES.emailsByTime.name],
    sesSuppressions: true,
  }),
  'batch-remove-suppressions': api({
    description: 'POST /v1/suppressions/batch/remove',
    actions: ['GetItem', 'Query', 'DeleteItem'],
    indexes: [INDEXES.emailsByTime.name],
    sesSuppressions: true,
  }),
  // Endpoints in one partition (PutItem, GetItem, Query; DeleteItem), their messages and attempts
  // under the endpoint's partition (GetItem, Query); a replay marks its message (PutItem) and
  // queues it (SendMessage). Creating and changing an endpoint resolves its name (no AWS call).
  'create-webhook': api({
    description: 'POST /v1/webhooks',
    optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'],
    actions: ['PutItem', 'Query'],
  }),
  'list-webhooks': api({ description: 'GET /v1/webhooks', actions: ['Query'] }),
  'get-webhook': api({ description: 'GET /v1/webhooks/{id}', actions: ['GetItem'] }),
  'update-webhook': api({
    description: 'PATCH /v1/webhooks/{id}',
    optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'],
    actions: ['GetItem', 'PutItem'],
  }),
  'delete-webhook': api({ description: 'DELETE /v1/webhooks/{id}', actions: ['GetItem', 'DeleteItem'] }),
  'rotate-webhook-secret': api({
    description: 'POST /v1/webhooks/{id}/signing-secret/rotate',
    actions: ['GetItem', 'PutItem'],
  }),
  'list-webhook-events': api({ description: 'GET /v1/webhooks/{id}/events', actions: ['GetItem', 'Query'] }),
  'get-webhook-event': api({ description: 'GET /v1/webhooks/{id}/events/{event_id}', actions: ['GetItem'] }),
  'list-webhook-attempts': api({
    description: 'GET /v1/webhooks/{id}/events/{event_id}/attempts',
    actions: ['GetItem', 'Query'],
  }),
  'replay-webhook-event': api({
    description: 'POST /v1/webhooks/{id}/events/{event_id}/replay',
    env: ['WEBHOOK_QUEUE_URL'],
    ...PUBLISHES,
    actions: ['GetItem', 'PutItem'],
  }),
  // The public pages: built into the service, no key, no table, no queue (http/public.ts).
  'get-openapi': {
    description: 'GET /v1/openapi.json: the API described (public)',
    env: [],
    optionalEnv: ['FRONT_DOOR_SECRET'],
    table: { actions: [] },
  },
  'get-api-reference': {
    description: 'GET /docs: the API reference page (public)',
    env: [],
    optionalEnv: ['FRONT_DOOR_SECRET'],
    table: { actions: [] },
  },
  'get-console': {
    description: 'GET /: the web console page (public)',
    env: [],
    optionalEnv: ['FRONT_DOOR_SECRET'],
    table: { actions: [] },
  },
  'get-console-asset': {
    description: 'GET /assets/{file}: the web console files (public)',
    env: [],
    optionalEnv: ['FRONT_DOOR_SECRET'],
    table: { actions: [] },
  },
  // Request logs: through both listing indexes (Query), then the page's items (BatchGetItem); one by id (GetItem).
  'list-logs': api({
    description: 'GET /v1/logs',
    actions: ['Query', 'BatchGetItem'],
    indexes: [INDEXES.emailsByTime.name, INDEXES.emailsByStatus.name],
  }),
  'get-log': api({ description: 'GET /v1/logs/{id}', actions: ['GetItem'] }),
  [FALLBACK_HANDLER]: api({ description: 'Every request no route matches: 401, 404 or 405' }),
  'process-send-queue': {
    description: 'Hands queued emails to SES, at most once each, at the account’s SES pace',
    env: [
      'TABLE_NAME',
      'CONFIGURATION_SET_NAME',
      'SEND_MAX_RECEIVE_COUNT',
      'SES_CONNECT_TIMEOUT_MS',
      'SES_REQUEST_TIMEOUT_MS',
      'SEND_FETCH_TIMEOUT_MS',
      'SEND_CLAIM_MARGIN_MS',
      'SEND_THROTTLE_BACKOFF_MS',
      'SEND_THROTTLE_BACKOFF_MAX_MS',
      'SEND_BLOCKED_RETRY_MIN_MS',
      'SEND_BLOCKED_RETRY_MAX_MS',
      'SES_ACCOUNT_REFRESH_MS',
      'WEBHOOK_QUEUE_URL',
      'CONTENT_BUCKET',
      'SEND_QUEUE_URL',
    ],
    optionalEnv: ['ATTACHMENT_ALLOW_LOOPBACK', 'SES_MAX_SEND_RATE', 'SENDER_OPTIONS_TTL_MS'],
    // The suppression list (BatchGetItem, once per email; also a large job's content); the attempt
    // record and its outcomes, suppressed recipients included, and the shared send schedule
    // (UpdateItem); why a claim was refused, a scheduled email's state and its API key, how far the
    // schedule is booked (GetItem); the webhook endpoints (Query).
    table: { actions: ['BatchGetItem', 'GetItem', 'UpdateItem', 'Query'] },
    // A scheduled email's message that came before its time goes back on the queue, delayed; so
    // does an email deferred for SES's limits (SendMessage, batched).
    sendQueue: ['SendMessage'],
    sendsEmail: true,
    // The account's send rate, 24-hour quota and whether sending is paused (GetAccount).
    sesAccount: true,
    ...PUBLISHES,
    // Attachments and large bodies read; a file fetched from its `path` kept (in parts when large).
    content: {
      'attachments/': ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
      'bodies/': ['s3:GetObject'],
    },
  },
  'process-ses-events': {
    description: "Applies SES's events to the emails and the suppression list",
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    // Events and suppressions (PutItem); outcomes and statuses (UpdateItem); an email's recipients
    // and a suppression that stands (GetItem); whether the batch's sends are recorded already
    // (BatchGetItem); the webhook endpoints (Query).
    table: { actions: ['UpdateItem', 'PutItem', 'GetItem', 'BatchGetItem', 'Query'] },
    ...PUBLISHES,
  },
  'check-domains': {
    description: 'Re-reads the verification of pending sending domains',
    env: ['TABLE_NAME', ...DOMAIN_SETTINGS.env],
    optionalEnv: DOMAIN_SETTINGS.optionalEnv,
    // Retired sets: listed (Query), deleted from SES, then forgotten (DeleteItem).
    table: { actions: ['Query', 'PutItem', 'UpdateItem', 'DeleteItem'] },
    identities: READ_IDENTITY,
    configurationSets: [...PUT_CONFIGURATION_SET, 'DeleteConfigurationSet'],
    ...PUBLISHES,
  },
  // The endpoint, read before each attempt (GetItem); the message and its attempt (BatchWriteItem,
  // PutItem for a dropped one); the endpoint's failing mark (UpdateItem). A failed attempt hides
  // its message until the next one is due (ChangeMessageVisibility; receiving and deleting are the
  // event source's), or, due in more than 15 minutes, parks it in the table (PutItem).
  'deliver-webhooks': {
    description: 'POSTs signed webhook messages to their endpoints, retrying on the schedule',
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'],
    table: { actions: ['GetItem', 'PutItem', 'BatchWriteItem', 'UpdateItem'] },
    webhookQueue: ['ChangeMessageVisibility'],
  },
  // Its progress item (GetItem, PutItem), the queued emails' index entries (Query on the status
  // index), their status items and contents (BatchGetItem), its conditional transitions
  // (UpdateItem); the webhook endpoints (Query) for the email.failed of the emails it fails, and
  // the metrics' counters (UpdateItem) for them.
  'sweep-emails': {
    description:
      'Re-queues stranded emails, fails those whose send message reached the dead-letter queue, and settles those whose outcome will never come',
    env: [
      'TABLE_NAME',
      'SEND_QUEUE_URL',
      'SEND_DEAD_LETTER_QUEUE_URL',
      'SEND_MAX_RECEIVE_COUNT',
      'SWEEP_REQUEUE_AFTER_MS',
      'SWEEP_BACKLOG_GRACE_MS',
      'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
      'SWEEP_FINAL_EVENTS_AFTER_MS',
      'SWEEP_OLD_CHECK_EVERY_MS',
      'WEBHOOK_QUEUE_URL',
    ],
    table: {
      actions: ['GetItem', 'PutItem', 'Query', 'BatchGetItem', 'UpdateItem'],
      indexes: [INDEXES.emailsByStatus.name],
    },
    // Re-queues (and reads the backlog first); reads the dead-letter queue without deleting.
    sendQueue: ['SendMessage', 'GetQueueAttributes'],
    sendDeadLetters: ['ReceiveMessage'],
    ...PUBLISHES,
  },
  // The due index (Query), the scheduler's cursors (Query, PutItem), scheduled emails' states and
  // contents (BatchGetItem) and their marks and transitions (UpdateItem); the webhook endpoints
  // (Query) and the metrics' counters (UpdateItem) for the emails it fails.
  'dispatch-scheduled': {
    description:
      'Queues scheduled emails as they fall due, and watches those due for a lost message or an unknown outcome',
    env: [
      'TABLE_NAME',
      'SEND_QUEUE_URL',
      'SWEEP_REQUEUE_AFTER_MS',
      'SWEEP_BACKLOG_GRACE_MS',
      'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
      'WEBHOOK_QUEUE_URL',
    ],
    table: {
      actions: ['PutItem', 'Query', 'BatchGetItem', 'UpdateItem'],
      indexes: [INDEXES.emailsByDue.name],
    },
    // Queues (delayed), and reads the backlog before re-queueing a stranded one.
    sendQueue: ['SendMessage', 'GetQueueAttributes'],
    ...PUBLISHES,
  },
  // The parked retries that fell due (Query on their partitions), put on the delivery queue
  // (SendMessage), then taken out (BatchWriteItem).
  'requeue-webhook-retries': {
    description: 'Puts parked webhook retries back on the delivery queue as they fall due',
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    table: { actions: ['Query', 'BatchWriteItem'] },
    webhookQueue: ['SendMessage'],
  },
  // Its mark (GetItem, UpdateItem), a finished hour's counter shards (Query) summed into day items
  // (UpdateItem).
  'roll-up-metrics': {
    description: "Rolls the email metrics' finished hours up into day items",
    env: ['TABLE_NAME'],
    table: { actions: ['GetItem', 'Query', 'UpdateItem'] },
  },
  // The API functions' request-log lines, delivered by their log groups' subscription filters,
  // stored 25 to a BatchWriteItem (each item keyed by its log id).
  'write-request-logs': {
    description: "Stores the API's request logs, delivered from the API functions' log groups",
    env: ['TABLE_NAME', 'LOG_RETENTION_DAYS'],
    table: { actions: ['BatchWriteItem'] },
  },
} as const satisfies Record<string, FunctionSpec>;

export type FunctionName = keyof typeof FUNCTIONS;

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
 * functions (no role here has s3:ListBucket: see FunctionSpec.content; the grants test holds the
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
    case 'GetAccount':
      return spec.sesAccount === true;
    case 'DeleteSuppressedDestination':
      return spec.sesSuppressions === true;
    default:
      return (
        (spec.identities ?? []).includes(action as SesIdentityAction) ||
        (spec.configurationSets ?? []).includes(action as SesConfigurationSetAction)
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
