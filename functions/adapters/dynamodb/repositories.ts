import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { loadConfig } from '../../shared/config.js';
import { newDynamoDbRateClient } from '../aws-clients.js';
import { DynamoApiKeyRepository } from './api-key-repository.js';
import { DynamoAudienceReads } from './audience-reads.js';
import { DynamoBroadcastNames } from './broadcast-names.js';
import { DynamoBroadcastRecipientReads } from './broadcast-recipients.js';
import { DynamoBroadcastStates } from './broadcast-states.js';
import { DynamoBroadcastTally, DynamoBroadcastTotals } from './broadcast-tally.js';
import { createDocumentClient } from './client.js';
import { DynamoDomainRepository } from './domain-repository.js';
import { DynamoEmailRepository } from './email-repository.js';
import { DynamoIdempotencyStore } from './idempotency-store.js';
import { DynamoMetricsStore } from './metrics-store.js';
import { DynamoReceiptRuleSetStates } from './receipt-rule-set-state.js';
import { DynamoReceivedEmailRepository } from './received-emails.js';
import { DynamoRequestLogRepository } from './request-log-repository.js';
import { DynamoSendPacer, DynamoSendQuotaStore } from './send-pacer.js';
import { DynamoShareStore } from './share-store.js';
import { DynamoSuppressionRepository } from './suppression-repository.js';
import { DynamoSweepStore } from './sweep-store.js';
import { parseLayout, type TableLayout } from './table-layout.js';
import { DynamoTemplateRepository } from './template-repository.js';
import { DynamoUnpublishedEventStore } from './unpublished-event-store.js';
import { DynamoWebhookBreakerRepository } from './webhook-breaker-repository.js';
import { DynamoWebhookHoldStore } from './webhook-held-store.js';
import { DynamoWebhookRepository } from './webhook-repository.js';
import { DynamoWebhookRetryStore } from './webhook-retry-store.js';

/** What the repositories of the single table share: its name, its clients and its layout. */
export interface Table {
  readonly name: string;
  readonly db: DynamoDBDocumentClient;
  /** The client of the per-key rate writes (it does not retry throttling), built with the API keys' repository. */
  readonly rateDb: () => DynamoDBDocumentClient;
  readonly layout: TableLayout;
  readonly deflateBodies?: boolean;
  readonly keyRateShards?: number;
}

export interface TableOptions {
  /** Whether new emails' bodies over 1 KB are stored deflated. @default true */
  deflateBodies?: boolean;
  /** Rate shards written with each new API key (api-keys/rate-limit.ts shardCount). @default 1 */
  keyRateShards?: number;
  /** The rate writes' client. @default `db` when it is given, else one that does not retry throttling */
  rateDb?: DynamoDBDocumentClient;
  /** Shards, time index and retention. @default TABLE_LAYOUT's, or email-keys.ts's defaults */
  layout?: TableLayout;
}

/** The table, with one client (built once per container unless `db` is given). */
export function openTable(tableName: string, db?: DynamoDBDocumentClient, options: TableOptions = {}): Table {
  let rateDb = options.rateDb ?? db;
  return {
    name: tableName,
    db: db ?? createDocumentClient(),
    rateDb: () => (rateDb ??= createDocumentClient(newDynamoDbRateClient())),
    layout: options.layout ?? parseLayout(loadConfig('TABLE_LAYOUT').TABLE_LAYOUT),
    deflateBodies: options.deflateBodies,
    keyRateShards: options.keyRateShards,
  };
}

/*
 * One factory per repository: a function names those it uses (functions/wiring.ts `apiDeps`), so
 * its bundle holds those and not the others.
 */
export const apiKeyRepository = (t: Table) =>
  new DynamoApiKeyRepository(t.db, t.name, { shards: t.keyRateShards, rateDb: t.rateDb() });
export const emailRepository = (t: Table) =>
  new DynamoEmailRepository(t.db, t.name, { deflateBodies: t.deflateBodies, layout: t.layout });
export const domainRepository = (t: Table) => new DynamoDomainRepository(t.db, t.name);
/** The receipt-rule writer's view of the active rule set (read by the domain functions). */
export const receiptRuleSetStates = (t: Table) => new DynamoReceiptRuleSetStates(t.db, t.name);
export const idempotencyStore = (t: Table) => new DynamoIdempotencyStore(t.db, t.name);
/** Email share links (emails/share.ts). */
export const shareStore = (t: Table) => new DynamoShareStore(t.db, t.name);
export const sweepStore = (t: Table) => new DynamoSweepStore(t.db, t.name, t.layout);
export const suppressionRepository = (t: Table) => new DynamoSuppressionRepository(t.db, t.name, t.layout);
export const webhookRepository = (t: Table) => new DynamoWebhookRepository(t.db, t.name);
/** The endpoints with their breaker's writes: the delivery and requeue functions only. */
export const webhookBreakerRepository = (t: Table) => new DynamoWebhookBreakerRepository(t.db, t.name);
export const webhookRetryStore = (t: Table) => new DynamoWebhookRetryStore(t.db, t.name);
export const webhookHoldStore = (t: Table) => new DynamoWebhookHoldStore(t.db, t.name);
export const unpublishedEventStore = (t: Table) => new DynamoUnpublishedEventStore(t.db, t.name);
/** The same, kept with PutItem: for the domain routes, whose roles have no UpdateItem. */
export const unpublishedEventStoreByPut = (t: Table) =>
  new DynamoUnpublishedEventStore(t.db, t.name, 'PutItem');
export const sendPacer = (t: Table) => new DynamoSendPacer(t.db, t.name);
/** Whether a broadcast was canceled, for the broadcast lane's consumer (cached about a second). */
export const broadcastStates = (t: Table) => new DynamoBroadcastStates(t.db, t.name);
export const sendQuotaStore = (t: Table) => new DynamoSendQuotaStore(t.db, t.name);
export const templateRepository = (t: Table) => new DynamoTemplateRepository(t.db, t.name);
/** What any concept reads of the audience (contacts/reads.ts). */
export const audienceReads = (t: Table) => new DynamoAudienceReads(t.db, t.name);
export const metricsStore = (t: Table) => new DynamoMetricsStore(t.db, t.name);
/** A broadcast's tally (its recipients by type, totals, clicked links), written as its emails' events arrive. */
export const broadcastTally = (t: Table) => new DynamoBroadcastTally(t.db, t.name, t.layout.retentionDays);
/** A broadcast's totals alone (get-broadcast, the fan-out). */
export const broadcastTotals = (t: Table) => new DynamoBroadcastTotals(t.db, t.name);
/** The reads of a broadcast's recipients and clicked links (the routes). */
export const broadcastRecipientReads = (t: Table) => new DynamoBroadcastRecipientReads(t.db, t.name);
/** The broadcasts' names (the email metrics' rows by broadcast). */
export const broadcastNames = (t: Table) => new DynamoBroadcastNames(t.db, t.name);
/** Received emails; `retentionDays` matters to the functions that store them (receive-email, sweep-received). */
export const receivedEmailRepository = (t: Table, retentionDays?: number) =>
  new DynamoReceivedEmailRepository(t.db, t.name, { retentionDays });
export const requestLogRepository = (t: Table) =>
  new DynamoRequestLogRepository(t.db, t.name, t.layout.timeIndex);

/** Repository factories by the name a function's dependencies give them. */
export type RepositoryFactories = Record<string, (table: Table) => unknown>;
export type Repositories<R extends RepositoryFactories> = { [K in keyof R]: ReturnType<R[K]> };

/** The repositories these factories make, on one table. */
export function repositoriesOf<R extends RepositoryFactories>(table: Table, factories: R): Repositories<R> {
  const made: Record<string, unknown> = {};
  for (const [name, make] of Object.entries(factories)) made[name] = make(table);
  return made as Repositories<R>;
}

/**
 * Every repository of the single table, sharing one client (the local service, tests and tools;
 * a function builds only its own: functions/wiring.ts), and a second one for the per-key rate
 * writes, which does not retry throttling (`rateDb`; else `db` when given).
 */
export function createRepositories(
  tableName: string,
  db?: DynamoDBDocumentClient,
  options: TableOptions = {},
) {
  return repositoriesOf(openTable(tableName, db, options), {
    apiKeys: apiKeyRepository,
    emails: emailRepository,
    domains: domainRepository,
    idempotency: idempotencyStore,
    sweep: sweepStore,
    suppressions: suppressionRepository,
    webhooks: webhookBreakerRepository,
    webhookRetries: webhookRetryStore,
    sendPacer,
    templates: templateRepository,
    metrics: metricsStore,
    requestLogs: requestLogRepository,
  });
}
