import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { loadConfig } from '../../config.js';
import { newDynamoDbRateClient } from '../aws-clients.js';
import { DynamoApiKeyRepository } from './api-key-repository.js';
import { createDocumentClient } from './client.js';
import { DynamoDomainRepository } from './domain-repository.js';
import { parseLayout, type TableLayout } from './email-keys.js';
import { DynamoEmailRepository } from './email-repository.js';
import { DynamoIdempotencyStore } from './idempotency-store.js';
import { DynamoMetricsStore } from './metrics-store.js';
import { DynamoRequestLogRepository } from './request-log-repository.js';
import { DynamoSendPacer } from './send-pacer.js';
import { DynamoSuppressionRepository } from './suppression-repository.js';
import { DynamoSweepStore } from './sweep-store.js';
import { DynamoTemplateRepository } from './template-repository.js';
import { DynamoWebhookRepository } from './webhook-repository.js';
import { DynamoWebhookRetryStore } from './webhook-retry-store.js';

/**
 * The repositories of the single table, sharing one client (built once per container), and a
 * second one for the per-key rate writes, which does not retry throttling (built with the first
 * when `db` is not given; `rateDb` otherwise, else `db`).
 * `deflateBodies`: whether new emails' bodies over 1 KB are stored deflated. @default true
 * `keyRateShards`: rate shards written with each new API key (core/rate-limit.ts shardCount). @default 1
 * `layout`: shards, time index and retention. @default TABLE_LAYOUT's, or email-keys.ts's defaults
 */
export function createRepositories(
  tableName: string,
  db?: DynamoDBDocumentClient,
  options: {
    deflateBodies?: boolean;
    keyRateShards?: number;
    rateDb?: DynamoDBDocumentClient;
    layout?: TableLayout;
  } = {},
) {
  const rateDb = options.rateDb ?? (db ? db : createDocumentClient(newDynamoDbRateClient()));
  db ??= createDocumentClient();
  const layout = options.layout ?? parseLayout(loadConfig('TABLE_LAYOUT').TABLE_LAYOUT);
  return {
    apiKeys: new DynamoApiKeyRepository(db, tableName, { shards: options.keyRateShards, rateDb }),
    emails: new DynamoEmailRepository(db, tableName, { deflateBodies: options.deflateBodies, layout }),
    domains: new DynamoDomainRepository(db, tableName),
    idempotency: new DynamoIdempotencyStore(db, tableName),
    sweep: new DynamoSweepStore(db, tableName, layout),
    suppressions: new DynamoSuppressionRepository(db, tableName, layout),
    webhooks: new DynamoWebhookRepository(db, tableName),
    webhookRetries: new DynamoWebhookRetryStore(db, tableName),
    sendPacer: new DynamoSendPacer(db, tableName),
    templates: new DynamoTemplateRepository(db, tableName),
    metrics: new DynamoMetricsStore(db, tableName),
    requestLogs: new DynamoRequestLogRepository(db, tableName, layout.timeIndex),
  };
}
