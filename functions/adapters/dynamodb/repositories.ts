import { DynamoApiKeyRepository } from './api-key-repository.js';
import { createDocumentClient } from './client.js';
import { DynamoDomainRepository } from './domain-repository.js';
import { DynamoEmailRepository } from './email-repository.js';
import { DynamoIdempotencyStore } from './idempotency-store.js';
import { DynamoSendPacer } from './send-pacer.js';
import { DynamoSuppressionRepository } from './suppression-repository.js';
import { DynamoSweepStore } from './sweep-store.js';
import { DynamoWebhookRepository } from './webhook-repository.js';
import { DynamoWebhookRetryStore } from './webhook-retry-store.js';

/**
 * The repositories of the single table, sharing one client (built once per container).
 * `deflateBodies`: whether new emails' bodies over 1 KB are stored deflated. @default true
 */
export function createRepositories(
  tableName: string,
  db = createDocumentClient(),
  options: { deflateBodies?: boolean } = {},
) {
  return {
    apiKeys: new DynamoApiKeyRepository(db, tableName),
    emails: new DynamoEmailRepository(db, tableName, options),
    domains: new DynamoDomainRepository(db, tableName),
    idempotency: new DynamoIdempotencyStore(db, tableName),
    sweep: new DynamoSweepStore(db, tableName),
    suppressions: new DynamoSuppressionRepository(db, tableName),
    webhooks: new DynamoWebhookRepository(db, tableName),
    webhookRetries: new DynamoWebhookRetryStore(db, tableName),
    sendPacer: new DynamoSendPacer(db, tableName),
  };
}
