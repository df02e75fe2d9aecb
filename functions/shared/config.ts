import * as z from 'zod/mini';

/** A string with something in it. */
const nonEmpty = () => z.string().check(z.minLength(1));

/** A whole number of at least `min`, `fallback` when unset (one builder: every function bundles these). */
const wholeNumber = (min: number, fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.gte(min)), fallback);

/**
 * Configuration, read once per container from the environment the stack (or the local runtime)
 * sets, and validated so a missing variable fails loudly at the first request.
 */
const SETTINGS = {
  TABLE_NAME: nonEmpty,
  /**
   * How the table spreads and keeps emails (adapters/dynamodb/email-keys.ts: shards, the time
   * index, retention), as JSON; set with TABLE_NAME wherever the table is granted. Absent: defaults.
   */
  TABLE_LAYOUT: () => z.optional(z.string()),
  SEND_QUEUE_URL: nonEmpty,
  CONFIGURATION_SET_NAME: nonEmpty,
  /** The send queue's maxReceiveCount: the attempt after which a message goes to the dead-letter queue. */
  SEND_MAX_RECEIVE_COUNT: () => wholeNumber(1, 5),
  /** Requests per second each API key may make (all function instances together). */
  RATE_LIMIT_PER_SECOND: () => wholeNumber(1, 10),
  /** Longest wait for a connection to SES (ms); past it SES never saw the request, so it is retried. */
  SES_CONNECT_TIMEOUT_MS: () => wholeNumber(100, 2_000),
  /** Longest wait for SES's answer to SendEmail (ms); past it the outcome is unknown and never retried. */
  SES_REQUEST_TIMEOUT_MS: () => wholeNumber(100, 10_000),
  /** Longest fetch of an attachment's `path` (ms); the consumer's time checks count on it. */
  SEND_FETCH_TIMEOUT_MS: () => wholeNumber(100, 20_000),
  /** What a claim leaves room for besides SES's answer and a fetch: the writes around them (ms). */
  SEND_CLAIM_MARGIN_MS: () => wholeNumber(0, 3_000),
  /** How long deferred emails wait (ms; see shared/pacing.ts): throttles back off from the first... */
  SEND_THROTTLE_BACKOFF_MS: () => wholeNumber(1, 1_000),
  SEND_THROTTLE_BACKOFF_MAX_MS: () => wholeNumber(1, 300_000),
  /** ...and a spent quota or paused sending waits between these. */
  SEND_BLOCKED_RETRY_MIN_MS: () => wholeNumber(1, 300_000),
  SEND_BLOCKED_RETRY_MAX_MS: () => wholeNumber(1, 900_000),
  /** How often a consumer instance reads the account's SES limits again (GetAccount, ms). */
  SES_ACCOUNT_REFRESH_MS: () => wholeNumber(0, 300_000),
  /**
   * The stack's `sesMaxSendRate`: recipients per second all send consumers together stay within,
   * instead of the account's rate from SES (for an account whose rate other senders share).
   */
  SES_MAX_SEND_RATE: () => z.optional(z.coerce.number().check(z.gt(0))),
  /** How long a send function instance keeps a template's published version (ms); 0: not at all. */
  TEMPLATE_CACHE_TTL_MS: () => wholeNumber(0, 1_000),
  /** How long a send consumer instance keeps a sender domain's options (tracking, its set; ms). */
  SENDER_OPTIONS_TTL_MS: () => wholeNumber(0, 60_000),
  /** The send queue's dead-letter queue (read by the sweeper). */
  SEND_DEAD_LETTER_QUEUE_URL: nonEmpty,
  /** The sweeper's bounds (ms); the stack derives them from its queues (see lib/, "invariants"). */
  SWEEP_REQUEUE_AFTER_MS: () => wholeNumber(0, 15 * 60_000),
  SWEEP_BACKLOG_GRACE_MS: () => wholeNumber(0, 60 * 60_000),
  SWEEP_UNKNOWN_OUTCOME_AFTER_MS: () => wholeNumber(0, 30 * 60_000),
  SWEEP_FINAL_EVENTS_AFTER_MS: () => wholeNumber(0, 15 * 3_600_000),
  SWEEP_OLD_CHECK_EVERY_MS: () => wholeNumber(0, 3_600_000),
  /** The contact imports' queue: one message per import step (contact-imports). */
  CONTACT_IMPORT_QUEUE_URL: nonEmpty,
  /**
   * The audience clean-up queue: what a deleted contact, segment or topic leaves behind (memberships
   * and choices), removed off the request path (contacts/workers.ts).
   */
  AUDIENCE_CLEANUP_QUEUE_URL: nonEmpty,
  /**
   * The secret holding the unsubscribe links' signing keys (its ARN; read at run time through the
   * secrets extension, never put in an environment): unsubscribe/keys.ts says its shape.
   */
  UNSUBSCRIBE_KEYS_SECRET: nonEmpty,
  /**
   * The service's public https origin (`https://…`, no path): where unsubscribe links point. The
   * stack sets it (the front door's host when it has one, else the API's); npm start its gateway's.
   */
  PUBLIC_ORIGIN: nonEmpty,
  /**
   * The broadcasts' fan-out queue: one message per broadcast step (a page of its segment, or a wait
   * for its time, its quota or its lane), each carrying the broadcast's generation (issue 41).
   */
  BROADCAST_FANOUT_QUEUE_URL: nonEmpty,
  /**
   * The broadcast lane: the send jobs of broadcast emails, consumed by their own consumer, which
   * books the shared SES schedule only a moment ahead so transactional mail keeps first claim.
   */
  BROADCAST_SEND_QUEUE_URL: nonEmpty,
  /** The broadcast lane's dead-letter queue, which the sweeper reads as it reads the send queue's. */
  BROADCAST_LANE_DEAD_LETTER_QUEUE_URL: nonEmpty,
  /** The webhook delivery queue: one message per (event, endpoint). */
  WEBHOOK_QUEUE_URL: nonEmpty,
  /**
   * Local development only (`npm start` sets it): webhook endpoints may be plain http on a loopback
   * host (localhost, 127.0.0.1, ::1). Never set by the stack: on AWS, endpoints are https and public.
   */
  WEBHOOK_ALLOW_LOOPBACK: () => z.optional(z.enum(['true', 'false'])),
  /**
   * Whether new emails' bodies over 1 KB are stored deflated (the stack's `deflateBodies`). Versions
   * before it cannot read them back: `false` while a rollback to one must stay possible.
   */
  DEFLATE_BODIES: () => z._default(z.enum(['true', 'false']), 'true'),
  /** The API's request logs (docs/logs.md): 'false' (the stack's requestLogs setting) emits no line and the log routes say so. */
  REQUEST_LOGS: () => z._default(z.enum(['true', 'false']), 'true'),
  /**
   * Whether request logs keep the requests' bodies (the stack's requestLogBodies): 'false' and the
   * API functions' lines carry none, and the writer stores none (a line from before the change).
   */
  REQUEST_LOG_BODIES: () => z._default(z.enum(['true', 'false']), 'true'),
  /** The bucket attachments and large bodies are kept in (S3; the local emulator's locally). */
  CONTENT_BUCKET: nonEmpty,
  /**
   * Local development only (`npm start` sets it): an attachment's `path` may be plain http on a
   * loopback host, so tests and local servers can serve files. Never set by the stack.
   */
  ATTACHMENT_ALLOW_LOOPBACK: () => z.optional(z.enum(['true', 'false'])),
  /**
   * The SMTP relay (issue 42; functions/smtp-relay/): the name it greets with and gives in EHLO
   * (the hostname apps are pointed at). @default localhost
   */
  SMTP_RELAY_HOSTNAME: () => z._default(nonEmpty(), 'localhost'),
  /** The relay's STARTTLS port inside its container (the NLB's 587 and 2587 pass through to it). */
  SMTP_RELAY_STARTTLS_PORT: () => wholeNumber(0, 2587),
  /**
   * The relay's secured port inside its container: plain TCP that only the NLB reaches, its TLS
   * listener (465, 2465) having done the TLS; the relay treats it as already secured.
   */
  SMTP_RELAY_SECURED_PORT: () => wholeNumber(0, 2465),
  /** The relay's health check port (HTTP `GET /health`: 200 while it takes mail, 503 once draining). 0 (the relay's ports too): any free port, as the tests ask. */
  SMTP_RELAY_HEALTH_PORT: () => wholeNumber(0, 8080),
  /** Whether each connection starts with a PROXY protocol v2 header (the NLB's target groups send one). */
  SMTP_RELAY_PROXY_PROTOCOL: () => z._default(z.enum(['true', 'false']), 'false'),
  /**
   * The Secrets Manager secret holding the STARTTLS certificate (JSON: `certificate`, `privateKey`,
   * optional `certificateChain`, PEM), read at start and again every SMTP_RELAY_TLS_RELOAD_SECONDS
   * without a restart. Absent: no STARTTLS port (the stack then makes no 587 listener).
   */
  SMTP_RELAY_TLS_SECRET_ARN: () => z.optional(nonEmpty()),
  SMTP_RELAY_TLS_RELOAD_SECONDS: () => wholeNumber(60, 3_600),
  /** The stack's SES events topic: the event destination of every domain's own configuration set. */
  SES_EVENTS_TOPIC_ARN: nonEmpty,
  /** SES's maximum delivery time, as the stack's configuration set has it (domains' own sets too). */
  SES_MAX_DELIVERY_SECONDS: () => z.coerce.number().check(z.int(), z.gte(300), z.lte(50_400)),
  /** Domains' own configuration sets are named this plus the domain's id (IAM grants `<prefix>*`). */
  DOMAIN_CONFIGURATION_SET_PREFIX: () => z.string().check(z.minLength(1), z.maxLength(34)),
  /**
   * The stack's `trackingHttpsTarget`: the host name of the HTTPS front for tracking subdomains (a
   * CloudFront distribution in front of SES's tracking host, docs/tracking.md). Absent: domains
   * cannot have a tracking subdomain (SES would write https links to a host that serves no HTTPS).
   */
  TRACKING_HTTPS_TARGET: () => z.optional(nonEmpty()),
  /**
   * The receipt-rule writer's FIFO queue (`sync-receipt-rules`), set where the stack receives
   * (its Region is one of RECEIVING_REGIONS). Absent: domains cannot enable receiving.
   */
  RECEIPT_RULES_QUEUE_URL: () => z.optional(nonEmpty()),
  /**
   * Local development only (`npm start` sets it): tracking and receiving records are looked up in
   * a stand-in that answers as if every record were published. Never set by the stack.
   */
  LOCAL_DNS_PUBLISHED: () => z.optional(z.enum(['true', 'false'])),
  /**
   * Local development only (`npm start` sets it): the local HTTPS front for tracking hosts
   * (`https://127.0.0.1:<port>`), where every tracking host is looked at before it goes into a
   * set, in place of port 443 of the address the host resolves to. Never set by the stack.
   */
  // Set by npm start alone (local/service.ts); no URL schema, which would weigh on every function's init.
  LOCAL_TRACKING_FRONT: () => z.optional(nonEmpty()),
  /** Local development only: the local front's certificate authority (PEM), trusted for that look alone. */
  LOCAL_TRACKING_FRONT_CA: () => z.optional(nonEmpty()),
  /**
   * Days request logs are kept from their request (DynamoDB TTL): the stack's logRetentionDays,
   * within its emailRetentionDays unless it opts out (lib/request-log-retention.ts).
   */
  LOG_RETENTION_DAYS: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(3650)), 30),
  /** Days received mail (its items and its objects under `received/`) is kept: the stack's receivedRetentionDays. */
  /**
   * The least time between two of SES's receipt-rule calls (ms): SES takes one a second. Set only
   * locally, where the local SES has no such limit, so a start does not wait 4 s for its rule set.
   */
  RECEIPT_RULE_CALL_INTERVAL_MS: () => wholeNumber(0, 1_000),
  RECEIVED_RETENTION_DAYS: () => wholeNumber(1, 30),
  /** The failure destination of receive-email's asynchronous invocations (read by sweep-received). */
  RECEIVED_FAILURES_QUEUE_URL: nonEmpty,
  /** 'true' (the stack's receivedVirusDownloads): mail SES flagged as a virus still offers its raw message and attachments. */
  RECEIVED_VIRUS_DOWNLOADS: () => z._default(z.enum(['true', 'false']), 'false'),
  /**
   * The SES receipt rule set our receiving rules are in: ours (`<prefix>-receiving`), or the set
   * that was active when receiving was set up (the custom resource's `RuleSet`; receiving/set-up.ts).
   */
  RECEIPT_RULE_SET: () => z.string().check(z.minLength(1), z.maxLength(64)),
  /** Our receipt rules are named this plus `-receive-<n>` (receiving/rules.ts). */
  RECEIPT_RULE_PREFIX: () => z.string().check(z.minLength(1), z.maxLength(48)),
  /** receive-email's ARN: our receipt rules' Lambda action. */
  RECEIVE_FUNCTION_ARN: nonEmpty,
} satisfies Record<string, () => z.ZodMiniType>;

type Settings = typeof SETTINGS;
export type Config = { [K in keyof Settings]: z.output<ReturnType<Settings[K]>> };

/** Every variable configuration may read. */
export const CONFIG_KEYS = Object.keys(SETTINGS) as (keyof Config)[];

export function loadConfig<K extends keyof Config>(...required: K[]): Pick<Config, K> {
  // Only the schemas of the settings asked for are built: each function reads a few of them.
  const shape = Object.fromEntries(required.map((key) => [key, SETTINGS[key]()]));
  const result = z.object(shape).safeParse(process.env);
  if (!result.success) throw new ConfigurationError(result.error.issues);
  return result.data as unknown as Pick<Config, K>;
}

type Issue = {
  path: readonly PropertyKey[];
  code?: string;
  values?: readonly unknown[];
  expected?: string;
  origin?: string;
  minimum?: unknown;
};

/** What a setting may be, from the schema's complaint about it (zod/mini carries no messages). */
function allowed(issue: Issue): string {
  if (issue.code === 'invalid_value' && issue.values)
    return `allowed: ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
  if (issue.code === 'too_small' && issue.origin === 'string') return 'allowed: any non-empty value';
  if (issue.code === 'too_small') return `allowed: a number of at least ${String(issue.minimum)}`;
  if (issue.expected === 'int' || issue.expected === 'number') return 'allowed: a whole number';
  return `allowed: a ${issue.expected ?? 'valid value'}`;
}

/**
 * A setting that is missing or not one of its allowed values. Its message names each such setting,
 * what it was set to and what it may be (`WEBHOOK_ALLOW_LOOPBACK is "1"; allowed: "true" or
 * "false"`): `npm start` stops with it, and a Lambda function fails its init with it (its log says
 * why), rather than answering 500 later.
 */
export class ConfigurationError extends Error {
  constructor(issues: readonly Issue[]) {
    const described = issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      const value = process.env[key];
      return value === undefined
        ? `${key} is not set`
        : `${key} is ${JSON.stringify(value)}; ${allowed(issue)}`;
    });
    super(`Invalid configuration: ${described.join('; ')}`);
    this.name = 'ConfigurationError';
  }
}

/** On Lambda (not in the local runtime or the tests, which never set it). */
export const onLambda = () => Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
