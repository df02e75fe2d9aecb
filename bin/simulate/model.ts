/**
 * A steady-state model of the pipeline on AWS, stage by stage: what each stage can carry (in emails
 * a second) under a set of stack settings and account quotas, where the first ceiling is for a
 * given load, and what 1,000 emails cost at that load. Pure: no AWS, no clock, no I/O; `npm run
 * simulate` prints it, test/unit/simulate.test.ts checks its findings, docs/scale.md explains it.
 *
 * Every figure is a named constant in FIGURES below, with where it comes from: the code, the
 * counts in docs/performance.md (what `npm run bench` meters), or AWS's documentation. Figures marked DESIGN
 * are the design's own choices, each in the code (sharded listing and due indexes: email-keys.ts;
 * sharded key windows: api-keys/rate-limit.ts; endpoints read once a batch, an endpoint's messages over
 * WEBHOOK_MESSAGE_SHARDS partitions: the webhook adapters).
 */

import { SEARCH_SHARDS } from '../../functions/adapters/dynamodb/email-keys.js';
import { METRIC_SHARDS } from '../../functions/adapters/dynamodb/metrics-store.js';
import { LOG_SHARDS, WEBHOOK_MESSAGE_SHARDS } from '../../functions/adapters/dynamodb/table.js';
import { durationMs, pacedRate } from '../../functions/shared/pacing.js';
import { ASSUMED_INVOCATION_MS, PRICES } from '../bench/cost.js';
import {
  type BatchFill,
  CALL_FIGURES as CALLS,
  logStoredBytesPerLog,
  logWriteUnitsPerLog,
  totalsPerEmail,
} from './calls.js';

export const FIGURES = {
  // --- DynamoDB (AWS: "Understanding DynamoDB warm throughput in different scenarios"; shared/notes/aws-facts.md)
  /** Writes a second one partition takes (the table's and each index's). */
  partitionWriteUnits: 1_000,
  /** Reads a second one partition takes (strongly consistent, up to 4 KB). */
  partitionReadUnits: 3_000,

  // --- Per-email write units on the base table, one-recipient receipt (docs/performance.md "What one email costs", bench counts)
  // (Each from the per-call terms of calls.ts, which test/unit/model-bench.test.ts holds to a recorded bench run.)
  /** send-email: the key's item, one write a request (each window counts in an attribute of its own: no races). */
  keyItemWriteUnits: 1 + CALLS.keyWindowRaceShare,
  /** send-email: summary and deflated body (BatchWriteItem). */
  contentWriteUnits: CALLS.contentWriteUnits,
  /** send-email: the status item itself (its two index entries are counted below). */
  statusPutWriteUnits: CALLS.statusPutWriteUnits - 2,
  /** process-send-queue: the attempt record, then the send. */
  attemptWriteUnits: CALLS.attemptWriteUnits,
  /** process-ses-events: delivered, with its event on the status item (its index entry's move below). */
  deliveredWriteUnits: CALLS.deliveredWriteUnits - 2,
  /** process-send-queue: the send schedule's conditional UpdateItem, one per batch (functions/shared/pacing.ts; SENDPACE). */
  paceWritesPerBatch: CALLS.paceWritesPerBatch,
  /**
   * DESIGN: the send schedule's item is planned at no more than this share of its 1,000 writes a
   * second (the rest for a batch's second write when traffic starts or stops, and batches not full).
   */
  paceItemHeadroom: 0.6,

  // --- Listing and due indexes (DESIGN: listingShards)
  /** emails-by-time, keys only: one entry written at creation, none after. */
  byTimeWritesPerEmail: 1,
  /** emails-by-status: the queued shard's entry put and removed (2), on one shard partition of listingShards. */
  byStatusQueuedWritesPerEmail: 2,
  /** emails-by-search, keys only: the sender's domain and the one recipient, written at creation, none after. */
  bySearchWritesPerEmail: CALLS.searchEntryWriteUnits,
  /** emails-by-search: partitions of one term's list (a recipient on every email: a Bcc archive). */
  searchShards: SEARCH_SHARDS,
  /** emails-by-status: the final status's entry (1). */
  byStatusFinalWritesPerEmail: 1,
  /** The scheduler (every minute on AWS) takes up to this many due emails per due-index shard per run. */
  scheduledPerShardPerRun: 1_000,
  schedulerRunSeconds: 60,
  /** A scheduled email adds the scheduler's mark (UpdateItem) and the due entry's put and removal (docs/api.md "Scheduled sending"). */
  scheduledExtraWriteUnits: 3,
  /** One SendMessageBatch (10 messages) from the scheduler, assumed 20 ms, calls side by side per shard. */
  schedulerSendBatchSeconds: 0.02,

  // --- Per-email read units (docs/performance.md "What one email costs")
  /** process-send-queue: the recipients' suppression entries (eventually consistent). */
  suppressionReadUnits: CALLS.suppressionReadUnits,
  /** process-ses-events: whether the batch's sends are recorded. */
  sentCheckReadUnits: CALLS.sentCheckReadUnits,
  /**
   * The webhook endpoints, one strongly consistent Query of the one WEBHOOKS partition per batch
   * that raises an event (email.sent by the send consumer, email.delivered by the events consumer),
   * with or without endpoints (functions/webhooks/publish.ts readOncePerInvocation);
   * per email see endpointReadsPerEmail.
   */
  endpointReadsPerBatch: CALLS.endpointReadsPerBatch,

  // --- API keys (DESIGN: a key's window spread over ceil(keyRateLimit / 400) items)
  keyShardRequestsPerSecond: 400,
  /** What one key reaches at most, by the design's own measure. */
  keyMaxRequestsPerSecond: 5_000,

  // --- Lambda (bin/bench/cost.ts ASSUMED_INVOCATION_MS; batch sizes from the stack)
  apiInvocationSeconds: (ASSUMED_INVOCATION_MS.default ?? 40) / 1000,
  sendBatchSeconds: (ASSUMED_INVOCATION_MS['process-send-queue'] ?? 150) / 1000,
  eventsBatchSeconds: (ASSUMED_INVOCATION_MS['process-ses-events'] ?? 60) / 1000,
  webhookBatchSeconds: (ASSUMED_INVOCATION_MS['deliver-webhooks'] ?? 150) / 1000,
  /** lib/email-service-stack.ts eventsBatchSize. */
  eventsBatchSize: 100,
  /** lib/constructs/webhooks.ts batchSize. */
  webhookBatchSize: 10,
  memoryGb: PRICES.lambdaMemoryGb,
  /** AWS "Lambda scaling behavior": 1,000 more instances per function every 10 s. */
  functionScaleUpPerTenSeconds: 1_000,
  /** AWS "Configuring scaling behavior for SQS event source mappings": up to 300 more a minute, 1,000 at most. */
  sqsSourceScaleUpPerMinute: 300,
  sqsSourceMaxConcurrency: 1_000,

  // --- SES's events (docs/performance.md "What one email costs": Send and Delivery, each an SNS publish and an SQS delivery)
  sesEventsPerEmail: 2,

  // --- Webhooks (docs/api.md "Webhooks"): a message's put, then its state and its attempt in one BatchWriteItem,
  // in one of the endpoint's WEBHOOK_MESSAGE_SHARDS partitions (a hash of the message id; table.ts)
  webhookWriteUnitsPerMessage: 2.5,
  webhookMessageShards: WEBHOOK_MESSAGE_SHARDS,

  // --- Email metrics (adapters/dynamodb/metrics-store.ts): one ADD on a counter item under 1 KB per
  // thing counted first: a receipt's send (the send consumer) and its delivery (the events
  // consumer); a tracked open or click adds one each. A sender domain's hour is spread over
  // METRIC_SHARDS partitions by a hash of the email id.
  metricWriteUnitsPerEmail: CALLS.metricWritesPerEmail,
  metricShards: METRIC_SHARDS,
  // --- Request logs (docs/logs.md; adapters/dynamodb/request-log-items.ts): one per API request, a compact
  // item in one of LOG_SHARDS time-sorted partitions of the table, its group's bodies compressed together
  // in slices over the group's items (write units per log: calls.ts logWriteUnitsPerLog, of the lines a
  // writer invocation takes); an error's log also has one status index entry.
  requestLogShards: LOG_SHARDS,
  /** Share of API requests answered 3xx, 4xx or 5xx (each log of one: a status index entry), assumed. */
  requestLogErrorShare: 0.02,
  /** The line a receipt's send emits, its bodies compressed, and CloudWatch's 26 bytes (bench section 3). */
  requestLogLineBytes: 2_100,
  /** Lines a subscription hands the writer per invocation (under load: one instance's log stream), assumed. */
  requestLogLinesPerInvocation: 25,
  requestLogWriterSeconds: 0.06,
  requestLogWriterMemoryGb: 0.25,
  /** Fleet-wide GetAccount reads a second (the pacing's single reader). */
  accountReadsPerSecond: 1,

  // --- SQS (AWS SQS quotas): standard queues take a nearly unlimited request rate; 120,000 messages in flight a queue.
  sqsInFlightPerQueue: 120_000,

  // --- Cost (PRICES from bin/bench/cost.ts, us-east-1, shared/notes/aws-facts.md; the rest as marked)
  /** docs/performance.md: the functions' JSON lines and metrics, Lambda's lines and the access log, per email. */
  logBytesPerEmail: 1_200,
  /** Stored per email kept (status, summary, deflated body, index entries), DESIGN figure. */
  storedBytesPerEmail: 2_800,
  /** us-east-1 list prices (aws.amazon.com/dynamodb/pricing), not in aws-facts.md: re-check. */
  storagePerGbMonth: 0.25,
  pitrPerGbMonth: 0.2,
  provisionedWcuHour: 0.00065,
  provisionedRcuHour: 0.00013,
  /** Provisioned capacity is bought above the load: auto scaling's usual 70 % target utilisation. */
  provisionedUtilisation: 0.7,
} as const;

export type Figures = { readonly [K in keyof typeof FIGURES]: number };

/**
 * Strongly consistent reads of the WEBHOOKS partition an email: one a send batch (its email.sent)
 * and one an events batch (email.delivered), shared by the emails of the batch (full batches).
 */
export const endpointReadsPerEmail = (setup: Setup, f: Figures = FIGURES): number =>
  f.endpointReadsPerBatch * (1 / setup.sendBatchSize + f.sesEventsPerEmail / f.eventsBatchSize);

/**
 * Strongly consistent reads of the WEBHOOKS partition an email by the webhook delivery function:
 * it reads each endpoint of a batch once (GetItem, its breaker's state with it;
 * functions/webhooks/deliver-batch.ts), so a full batch of `webhookBatchSize` messages reads as
 * many endpoints as it holds, at most all of them.
 */
export const deliveryEndpointReadsPerEmail = (w: Workload, f: Figures = FIGURES): number => {
  const messages = w.webhookEndpoints * w.webhookEventsPerEmail;
  if (!messages) return 0;
  return (messages / f.webhookBatchSize) * Math.min(w.webhookEndpoints, f.webhookBatchSize);
};

/** Every strongly consistent read of the WEBHOOKS partition an email (publishing and delivery). */
export const webhooksPartitionReadsPerEmail = (setup: Setup, w: Workload, f: Figures = FIGURES): number =>
  endpointReadsPerEmail(setup, f) + deliveryEndpointReadsPerEmail(w, f);

/**
 * The send schedule at SES's rate: full batches of `sendBatchSize` emails, each booking its
 * recipients' time at the paced rate (1 % under SES's) to the microsecond, with the code's own
 * arithmetic (functions/shared/pacing.ts): the recipients a second it carries, and the writes a
 * second its one item takes at that rate (and their share of the item's 1,000).
 */
export function schedulePacing(
  sesRate: number,
  sendBatchSize: number,
  recipientsPerEmail = 1,
  f: Figures = C,
) {
  const paced = pacedRate(sesRate);
  const slots = sendBatchSize * recipientsPerEmail;
  const carried = (slots * 1000) / durationMs(slots, paced);
  const writesPerSecond = (carried / slots) * f.paceWritesPerBatch;
  return { paced, carried, writesPerSecond, itemShare: writesPerSecond / f.partitionWriteUnits };
}

/** A number as the docs write it: 10,000. */
const n = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 2 });

/** The stack's settings (lib/app.ts) and the account's quotas, which decide the ceilings. */
export interface Setup {
  name: string;
  apiRateLimit: number;
  apiBurstLimit: number;
  keyRateLimit: number;
  sendConcurrency: number;
  sendBatchSize: number;
  sesEventsConcurrency: number;
  webhookConcurrency: number;
  /** DESIGN: shards of the listing and due indexes. */
  listingShards: number;
  /** DESIGN: days emails are kept (TTL). */
  emailRetentionDays: number;
  quotas: {
    /** API Gateway, per account and region (10,000 a second by default; 2,500 in newer regions). */
    apiGatewayRps: number;
    /** Lambda concurrent executions per account and region (1,000 by default). */
    lambdaConcurrency: number;
    /** SES maximum send rate, recipients a second (14 for a new production account). */
    sesMaxSendRate: number;
    /** DynamoDB on-demand, per table and per index (40,000 read and 40,000 write units by default). */
    tableWriteUnits: number;
    tableReadUnits: number;
    /** SNS publishes a second in the region (30,000 in us-east-1, assumed to count SES's publishes). */
    snsPublishPerSecond: number;
  };
}

export const DEFAULT_SETUP: Setup = {
  name: 'default settings',
  apiRateLimit: 50,
  apiBurstLimit: 100,
  keyRateLimit: 10,
  sendConcurrency: 5,
  sendBatchSize: 10,
  sesEventsConcurrency: 5,
  webhookConcurrency: 5,
  listingShards: 32,
  emailRetentionDays: 30,
  quotas: {
    apiGatewayRps: 10_000,
    lambdaConcurrency: 1_000,
    sesMaxSendRate: 14,
    tableWriteUnits: 40_000,
    tableReadUnits: 40_000,
    snsPublishPerSecond: 30_000,
  },
};

/** What docs/scale.md recommends for 10,000 emails a second: settings, and the quotas to ask for. */
export const RECOMMENDED_SETUP: Setup = {
  name: 'recommended for 10k/s',
  apiRateLimit: 15_000,
  apiBurstLimit: 5_000,
  keyRateLimit: 2_000,
  sendConcurrency: 300,
  sendBatchSize: 20,
  sesEventsConcurrency: 50,
  webhookConcurrency: 500,
  listingShards: 32,
  emailRetentionDays: 30,
  quotas: {
    apiGatewayRps: 20_000,
    lambdaConcurrency: 2_000,
    sesMaxSendRate: 20_000,
    tableWriteUnits: 200_000,
    tableReadUnits: 80_000,
    snsPublishPerSecond: 30_000,
  },
};

/** The traffic: one-recipient receipts (what the bench sends), single sends spread over a few keys. */
export interface Workload {
  emailsPerSecond: number;
  recipientsPerEmail: number;
  /** 1 for POST /v1/emails, up to 100 for POST /v1/emails/batch. */
  emailsPerRequest: number;
  apiKeys: number;
  /** Share of emails sent with scheduled_at. */
  scheduledShare: number;
  /** Endpoints subscribed, and the events per email each takes (email.sent and email.delivered: 2). */
  webhookEndpoints: number;
  webhookEventsPerEmail: number;
}

export const RECEIPTS: Omit<Workload, 'emailsPerSecond'> = {
  recipientsPerEmail: 1,
  emailsPerRequest: 1,
  apiKeys: 10,
  scheduledShare: 0,
  webhookEndpoints: 0,
  webhookEventsPerEmail: 2,
};

export interface Stage {
  id: string;
  /** Where in the pipeline, in order from API Gateway to the webhooks. */
  stage: string;
  limit: string;
  /** Emails a second it carries for this workload's mix (Infinity: no ceiling from it). */
  capacity: number;
  /** What moves it. */
  settings: string;
}

const C: Figures = FIGURES;

/** Base-table write units per email (not the indexes). */
export function baseWriteUnits(setup: Setup, w: Workload, f: Figures = C): number {
  const perRecipient = w.recipientsPerEmail; // attempt and delivered writes per email; more recipients add their own (docs/performance.md)
  return (
    f.keyItemWriteUnits / w.emailsPerRequest +
    f.contentWriteUnits +
    f.statusPutWriteUnits +
    f.paceWritesPerBatch / setup.sendBatchSize +
    f.attemptWriteUnits +
    f.deliveredWriteUnits * perRecipient +
    f.metricWriteUnitsPerEmail +
    w.scheduledShare * f.scheduledExtraWriteUnits +
    requestLogWriteUnits(f) / w.emailsPerRequest
  );
}

/** Table write units per logged request: its item (by the writer's batch fill; calls.ts). */
export const requestLogWriteUnits = (f: Figures = C): number =>
  logWriteUnitsPerLog(f.requestLogLinesPerInvocation);

/** Bytes stored per logged request (its item, its share of its group's bodies; calls.ts). */
export const requestLogStoredBytes = (f: Figures = C): number =>
  logStoredBytesPerLog(f.requestLogLinesPerInvocation);

/** The batches' fills under load (full batches), as calls.ts takes them. */
export const fillAt = (setup: Setup, load: number, f: Figures = C): BatchFill => ({
  sendBatch: setup.sendBatchSize,
  eventsBatch: f.eventsBatchSize,
  logLinesPerInvocation: f.requestLogLinesPerInvocation,
  accountReadsPerEmail: f.accountReadsPerSecond / Math.max(1, load),
});

/** calls.ts's totals at the model's fills: what test/unit/simulate.test.ts holds the sums here to. */
export const callTotalsAt = (setup: Setup, load: number, f: Figures = C) =>
  totalsPerEmail(fillAt(setup, load, f));

export function indexWriteUnits(f: Figures = C) {
  return {
    byTime: f.byTimeWritesPerEmail,
    bySearch: f.bySearchWritesPerEmail,
    byStatus: f.byStatusQueuedWritesPerEmail + f.byStatusFinalWritesPerEmail,
    /** The status index entries of request logs (an error's only), per request. */
    requestLogs: f.requestLogErrorShare,
  };
}

export function readUnits(setup: Setup, f: Figures = C, w?: Workload): number {
  return (
    f.suppressionReadUnits +
    f.sentCheckReadUnits +
    endpointReadsPerEmail(setup, f) +
    (w ? deliveryEndpointReadsPerEmail(w, f) : 0)
  );
}

/** Concurrent Lambda executions each function needs at a load, its event source's cap applied. */
export function concurrencyAt(setup: Setup, w: Workload, load: number, f: Figures = C) {
  const messages = w.webhookEndpoints * w.webhookEventsPerEmail;
  const api = (load / w.emailsPerRequest) * f.apiInvocationSeconds;
  const send = Math.min(setup.sendConcurrency, (load / setup.sendBatchSize) * f.sendBatchSeconds);
  const events = Math.min(
    setup.sesEventsConcurrency,
    ((load * f.sesEventsPerEmail) / f.eventsBatchSize) * f.eventsBatchSeconds,
  );
  const webhooks = Math.min(
    setup.webhookConcurrency,
    ((load * messages) / f.webhookBatchSize) * f.webhookBatchSeconds,
  );
  return { api, send, events, webhooks, total: api + send + events + webhooks };
}

/** The largest load whose demand stays within the limit (demand grows with the load). */
function largestWithin(limit: number, demand: (load: number) => number): number {
  let lo = 0;
  let hi = 1;
  while (demand(hi) <= limit) {
    hi *= 2;
    if (hi > 1e9) return Number.POSITIVE_INFINITY;
  }
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (demand(mid) <= limit) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Every stage's ceiling, in pipeline order. */
export function stages(setup: Setup, w: Workload, f: Figures = C): Stage[] {
  const q = setup.quotas;
  const perKey = Math.min(setup.keyRateLimit, f.keyMaxRequestsPerSecond);
  const messagesPerEmail = w.webhookEndpoints * w.webhookEventsPerEmail;
  const index = indexWriteUnits(f);
  const schedulerRunCapacity = setup.listingShards * f.scheduledPerShardPerRun;
  // SendMessageBatch calls of one run, side by side per shard, within the minute between runs.
  const schedulerSqsCapacity =
    (f.schedulerRunSeconds / f.schedulerSendBatchSeconds) * 10 * Math.max(1, setup.listingShards);
  const scheduledPerSecond = Math.min(schedulerRunCapacity, schedulerSqsCapacity) / f.schedulerRunSeconds;
  return [
    {
      id: 'api-account',
      stage: 'API Gateway, account',
      limit: `${n(q.apiGatewayRps)} requests/s per account and region (burst 5,000)`,
      capacity: q.apiGatewayRps * w.emailsPerRequest,
      settings: 'Service Quotas: API Gateway throttle rate; or POST /v1/emails/batch (100 a request)',
    },
    {
      id: 'api-stage',
      stage: 'API Gateway, stage throttle',
      limit: `${n(setup.apiRateLimit)} requests/s, burst ${n(setup.apiBurstLimit)}`,
      capacity: setup.apiRateLimit * w.emailsPerRequest,
      settings: 'apiRateLimit, apiBurstLimit',
    },
    {
      id: 'api-keys',
      stage: 'API keys',
      limit: `${n(perKey)} requests/s a key × ${w.apiKeys} keys (a key's window on ${Math.ceil(
        setup.keyRateLimit / f.keyShardRequestsPerSecond,
      )} items)`,
      capacity: perKey * w.apiKeys * w.emailsPerRequest,
      settings: `keyRateLimit (one key reaches about ${n(f.keyMaxRequestsPerSecond)}/s); more keys`,
    },
    {
      id: 'lambda-account',
      stage: 'Lambda, account concurrency',
      limit: `${n(q.lambdaConcurrency)} concurrent executions`,
      capacity: largestWithin(q.lambdaConcurrency, (load) => concurrencyAt(setup, w, load, f).total),
      settings: 'Service Quotas: Lambda concurrent executions',
    },
    {
      id: 'send-consumers',
      stage: 'Send consumers',
      limit: `${setup.sendConcurrency} invocations × ${setup.sendBatchSize} emails / ${f.sendBatchSeconds} s`,
      capacity: (setup.sendConcurrency * setup.sendBatchSize) / f.sendBatchSeconds,
      settings: 'sendConcurrency, sendBatchSize',
    },
    {
      id: 'send-schedule',
      stage: 'Send schedule item (SENDPACE)',
      limit: `${n(f.partitionWriteUnits)} writes/s on one item (planned at ${f.paceItemHeadroom * 100} %: ${n(
        ((f.paceItemHeadroom * f.partitionWriteUnits) / f.paceWritesPerBatch) * setup.sendBatchSize,
      )}/s), ${f.paceWritesPerBatch} a batch of ${setup.sendBatchSize}`,
      capacity: (f.partitionWriteUnits / f.paceWritesPerBatch) * setup.sendBatchSize,
      settings: 'sendBatchSize',
    },
    {
      id: 'ses-rate',
      stage: 'SES, account send rate',
      limit: `${n(q.sesMaxSendRate)} recipients/s, booked at ${n(pacedRate(q.sesMaxSendRate))} to the microsecond`,
      // What the schedule carries at SES's rate (the send schedule's precision), not SES's rate itself.
      capacity:
        schedulePacing(q.sesMaxSendRate, setup.sendBatchSize, w.recipientsPerEmail, f).carried /
        w.recipientsPerEmail,
      settings: 'ask AWS for a higher maximum send rate (the service follows GetAccount)',
    },
    {
      id: 'sns-publish',
      stage: "SNS, SES's events",
      limit: `${n(q.snsPublishPerSecond)} publishes/s in the region, ${f.sesEventsPerEmail} events an email`,
      capacity: q.snsPublishPerSecond / (f.sesEventsPerEmail * w.recipientsPerEmail),
      settings: 'Service Quotas: SNS Publish (per region)',
    },
    {
      id: 'events-consumers',
      stage: 'SES events consumers',
      limit: `${setup.sesEventsConcurrency} invocations × ${f.eventsBatchSize} events / ${f.eventsBatchSeconds} s`,
      capacity: (setup.sesEventsConcurrency * f.eventsBatchSize) / f.eventsBatchSeconds / f.sesEventsPerEmail,
      settings: 'sesEventsConcurrency',
    },
    {
      id: 'table-writes',
      stage: 'DynamoDB table, writes',
      limit: `${n(q.tableWriteUnits)} write units/s per table, ${baseWriteUnits(setup, w, f).toFixed(2)} an email`,
      capacity: q.tableWriteUnits / baseWriteUnits(setup, w, f),
      settings: 'Service Quotas: table-level write throughput; warm throughput before a launch',
    },
    {
      id: 'table-reads',
      stage: 'DynamoDB table, reads',
      limit: `${n(q.tableReadUnits)} read units/s per table, ${n(readUnits(setup, f, w))} an email`,
      capacity: q.tableReadUnits / readUnits(setup, f, w),
      settings: 'Service Quotas: table-level read throughput',
    },
    {
      id: 'index-by-status',
      stage: 'emails-by-status index',
      limit: `${setup.listingShards} shards × ${n(f.partitionWriteUnits)} writes/s, ${f.byStatusQueuedWritesPerEmail} on the queued shard an email`,
      capacity: Math.min(
        (setup.listingShards * f.partitionWriteUnits) / f.byStatusQueuedWritesPerEmail,
        q.tableWriteUnits / (index.byStatus + index.requestLogs / w.emailsPerRequest),
      ),
      settings: 'listingShards; the index-level write quota',
    },
    {
      id: 'index-by-search',
      stage: 'emails-by-search index',
      limit: `${f.searchShards} shards × ${n(f.partitionWriteUnits)} writes/s for one recipient, domain or tag on every email, ${index.bySearch} entries an email`,
      capacity: Math.min(f.searchShards * f.partitionWriteUnits, q.tableWriteUnits / index.bySearch),
      settings: 'the index-level write quota (the shards are fixed)',
    },
    {
      id: 'index-by-time',
      stage: 'emails-by-time index',
      limit: `${setup.listingShards} shards × ${n(f.partitionWriteUnits)} writes/s, ${index.byTime} an email`,
      capacity: Math.min(
        (setup.listingShards * f.partitionWriteUnits) / index.byTime,
        q.tableWriteUnits / index.byTime,
      ),
      settings: 'listingShards',
    },
    {
      id: 'request-logs',
      stage: 'Request logs (LOGS#nn table partitions)',
      limit: `${f.requestLogShards} shards × ${n(f.partitionWriteUnits)} writes/s, ${requestLogWriteUnits(f).toFixed(2)} a request`,
      capacity: ((f.requestLogShards * f.partitionWriteUnits) / requestLogWriteUnits(f)) * w.emailsPerRequest,
      settings: 'none: LOG_SHARDS (fixed, 16); POST /v1/emails/batch (100 emails a log)',
    },
    {
      id: 'webhook-endpoint-reads',
      stage: 'Webhook endpoints (WEBHOOKS partition)',
      limit: `${n(f.partitionReadUnits)} reads/s on one partition, ${n(webhooksPartitionReadsPerEmail(setup, w, f))} strongly consistent an email (one a batch raising events; one an endpoint a delivery batch)`,
      capacity: f.partitionReadUnits / webhooksPartitionReadsPerEmail(setup, w, f),
      settings: 'sendBatchSize; more endpoints spread no reads (they share the partition)',
    },
    {
      id: 'metrics-counters',
      stage: "Email metrics counters (one sender domain's hour)",
      limit: `${f.metricShards} shards × ${n(f.partitionWriteUnits)} writes/s, ${f.metricWriteUnitsPerEmail} an email`,
      capacity: (f.metricShards * f.partitionWriteUnits) / f.metricWriteUnitsPerEmail,
      settings: 'METRIC_SHARDS (metrics-store.ts)',
    },
    {
      id: 'scheduler',
      stage: 'Scheduler (due index)',
      limit: `${setup.listingShards} shards × ${n(f.scheduledPerShardPerRun)} a run every ${f.schedulerRunSeconds} s`,
      capacity: w.scheduledShare > 0 ? scheduledPerSecond / w.scheduledShare : Number.POSITIVE_INFINITY,
      settings: 'listingShards',
    },
    {
      id: 'webhook-delivery',
      stage: 'Webhook delivery',
      limit: `${setup.webhookConcurrency} invocations × ${f.webhookBatchSize} attempts / ${f.webhookBatchSeconds} s`,
      capacity:
        messagesPerEmail > 0
          ? (setup.webhookConcurrency * f.webhookBatchSize) / f.webhookBatchSeconds / messagesPerEmail
          : Number.POSITIVE_INFINITY,
      settings: 'webhookConcurrency',
    },
    {
      id: 'webhook-log',
      stage: "Webhook message log (an endpoint's shards)",
      limit: `${f.webhookMessageShards} shards × ${n(f.partitionWriteUnits)} writes/s an endpoint, ${f.webhookWriteUnitsPerMessage} a message`,
      capacity:
        messagesPerEmail > 0
          ? (f.webhookMessageShards * f.partitionWriteUnits) /
            f.webhookWriteUnitsPerMessage /
            w.webhookEventsPerEmail
          : Number.POSITIVE_INFINITY,
      settings: 'none: more endpoints (each has its own shards)',
    },
  ];
}

export interface Finding {
  load: number;
  setup: string;
  /** The lowest ceiling below the load, or undefined when every stage carries it. */
  firstCeiling?: Stage;
  /** The stage closest to its ceiling, and how close (load / capacity). */
  tightest: Stage;
  utilisation: number;
  /** Every stage under the load, lowest first. */
  ceilings: Stage[];
}

export function simulate(setup: Setup, w: Workload, f: Figures = C): Finding {
  const all = stages(setup, w, f);
  const byCapacity = [...all].sort((a, b) => a.capacity - b.capacity);
  const ceilings = byCapacity.filter((s) => s.capacity < w.emailsPerSecond);
  const tightest = byCapacity[0] as Stage;
  return {
    load: w.emailsPerSecond,
    setup: setup.name,
    firstCeiling: ceilings[0],
    tightest,
    utilisation: w.emailsPerSecond / tightest.capacity,
    ceilings,
  };
}

export interface CostLine {
  item: string;
  onDemand: number;
  provisioned: number;
  arithmetic: string;
}

/** Dollars per 1,000 emails sustained at the workload's rate; DynamoDB on demand and provisioned. */
export function costPerThousand(setup: Setup, w: Workload, f: Figures = C): CostLine[] {
  const k = 1_000;
  const writes =
    baseWriteUnits(setup, w, f) +
    indexWriteUnits(f).byTime +
    indexWriteUnits(f).byStatus +
    indexWriteUnits(f).bySearch +
    indexWriteUnits(f).requestLogs / w.emailsPerRequest;
  const reads = readUnits(setup, f);
  const provisionedWrite = f.provisionedWcuHour / 3600 / f.provisionedUtilisation;
  const provisionedRead = f.provisionedRcuHour / 3600 / f.provisionedUtilisation;
  const sqs =
    1 + 2 / setup.sendBatchSize + f.sesEventsPerEmail + (2 * f.sesEventsPerEmail) / f.eventsBatchSize;
  const writerInvocations = 1 / w.emailsPerRequest / f.requestLogLinesPerInvocation;
  const invocations =
    1 / w.emailsPerRequest +
    1 / setup.sendBatchSize +
    f.sesEventsPerEmail / f.eventsBatchSize +
    writerInvocations;
  const gbSeconds =
    f.memoryGb *
      (f.apiInvocationSeconds / w.emailsPerRequest +
        f.sendBatchSeconds / setup.sendBatchSize +
        (f.eventsBatchSeconds * f.sesEventsPerEmail) / f.eventsBatchSize) +
    writerInvocations * f.requestLogWriterSeconds * f.requestLogWriterMemoryGb;
  const logBytes = f.logBytesPerEmail + f.requestLogLineBytes / w.emailsPerRequest;
  const months = setup.emailRetentionDays / (365 / 12);
  const logStored = f.requestLogLinesPerInvocation > 0 ? requestLogStoredBytes(f) : 0;
  const storedBytes = f.storedBytesPerEmail + logStored / w.emailsPerRequest;
  const storedGb = storedBytes / 1024 ** 3;
  const storage = storedGb * months * (f.storagePerGbMonth + f.pitrPerGbMonth);
  const same = (item: string, perEmail: number, arithmetic: string): CostLine => ({
    item,
    onDemand: perEmail * k,
    provisioned: perEmail * k,
    arithmetic,
  });
  return [
    {
      item: 'DynamoDB writes',
      onDemand: writes * PRICES.dynamoPerWriteUnit * k,
      provisioned: writes * provisionedWrite * k,
      arithmetic: `${writes.toFixed(2)} units × $0.625/M on demand; × $${f.provisionedWcuHour}/WCU-h ÷ 3,600 ÷ ${f.provisionedUtilisation} provisioned`,
    },
    {
      item: 'DynamoDB reads',
      onDemand: reads * PRICES.dynamoPerReadUnit * k,
      provisioned: reads * provisionedRead * k,
      arithmetic: `${reads} units × $0.125/M on demand; × $${f.provisionedRcuHour}/RCU-h ÷ 3,600 ÷ ${f.provisionedUtilisation} provisioned`,
    },
    same('SQS requests', sqs * PRICES.sqsPerRequest, `${sqs.toFixed(2)} requests × $0.40/M`),
    same(
      "SNS publishes (SES's events)",
      f.sesEventsPerEmail * PRICES.snsPerPublish,
      `${f.sesEventsPerEmail} × $0.50/M`,
    ),
    same('API Gateway (HTTP API)', PRICES.apiGatewayPerRequest / w.emailsPerRequest, '1 request × $1.00/M'),
    same(
      'Lambda requests and duration',
      invocations * PRICES.lambdaPerRequest + gbSeconds * PRICES.lambdaPerGbSecond,
      `${invocations.toFixed(3)} invocations × $0.20/M + ${gbSeconds.toFixed(4)} GB-s × $0.0000133334`,
    ),
    same(
      'CloudWatch Logs',
      logBytes * PRICES.logsPerByte,
      `${Math.round(logBytes).toLocaleString('en-US')} bytes (${f.requestLogLineBytes.toLocaleString('en-US')} of them the request log) × $0.50/GB`,
    ),
    same(
      `Storage, kept ${setup.emailRetentionDays} days (with PITR)`,
      storage,
      `${Math.round(storedBytes).toLocaleString('en-US')} bytes (${Math.round(logStored)} of them the request log) × ${months.toFixed(2)} months × ($${f.storagePerGbMonth} + $${f.pitrPerGbMonth} PITR)/GB-month`,
    ),
  ];
}

/** Gigabytes held in steady state: emails/s × seconds a day × days kept × bytes an email. */
export function storedGigabytes(setup: Setup, w: Workload, f: Figures = C): number {
  const bytes = f.storedBytesPerEmail + requestLogStoredBytes(f) / w.emailsPerRequest;
  return (w.emailsPerSecond * 86_400 * setup.emailRetentionDays * bytes) / 1024 ** 3;
}

/** How long the slowest-scaling part takes to reach a load from idle (Lambda and SQS sources; DynamoDB's warm throughput aside). */
export function rampSeconds(setup: Setup, w: Workload, f: Figures = C) {
  const need = concurrencyAt(setup, w, w.emailsPerSecond, f);
  const sqsSource = (n: number) =>
    Math.max(0, (Math.min(n, f.sqsSourceMaxConcurrency) - 5) / f.sqsSourceScaleUpPerMinute) * 60;
  return {
    api: (need.api / f.functionScaleUpPerTenSeconds) * 10,
    send: sqsSource(need.send),
    events: sqsSource(need.events),
    webhooks: sqsSource(need.webhooks),
  };
}
