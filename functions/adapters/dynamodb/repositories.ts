import { loadConfig } from '../../config.js';
import { DynamoApiKeyRepository } from './api-key-repository.js';
import { createDocumentClient } from './client.js';
import { DynamoDomainRepository } from './domain-repository.js';
import { parseLayout, type TableLayout } from './email-keys.js';
import { DynamoEmailRepository } from './email-repository.js';
import { DynamoIdempotencyStore } from './idempotency-store.js';
import { DynamoSendPacer } from './send-pacer.js';
import { DynamoSuppressionRepository } from './suppression-repository.js';
import { DynamoSweepStore } from './sweep-store.js';
import { DynamoWebhookRepository } from './webhook-repository.js';

/**
 * The repositories of the single table, sharing one client (built once per container).
 * `deflateBodies`: whether new emails' bodies over 1 KB are stored deflated. @default true
 * `layout`: shards, time index and retention. @default TABLE_LAYOUT's, or email-keys.ts's defaults
 */
export function createRepositories(
  tableName: string,
  db = createDocumentClient(),
  options: { deflateBodies?: boolean; layout?: TableLayout } = {},
) {
  const layout = options.layout ?? parseLayout(loadConfig('TABLE_LAYOUT').TABLE_LAYOUT);
  return {
    apiKeys: new DynamoApiKeyRepository(db, tableName),
    emails: new DynamoEmailRepository(db, tableName, { ...options, layout }),
    domains: new DynamoDomainRepository(db, tableName),
    idempotency: new DynamoIdempotencyStore(db, tableName),
    sweep: new DynamoSweepStore(db, tableName, layout),
    suppressions: new DynamoSuppressionRepository(db, tableName, layout),
    webhooks: new DynamoWebhookRepository(db, tableName),
    sendPacer: new DynamoSendPacer(db, tableName),
  };
}
