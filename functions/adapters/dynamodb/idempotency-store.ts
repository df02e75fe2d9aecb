import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyBegin,
  type StoredResponse,
} from '../../emails/idempotency.js';
import type { IdempotencyStore } from '../../emails/ports.js';
import { writeIf } from './client.js';
import { keys } from './table.js';

/**
 * Idempotency keys, per API key: a conditional put claims a key for one request (with the email id
 * it will create), the answer is stored when it is done, and TTL removes the item after 24 hours.
 * No transactions: the claim is a single conditional write.
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private key(scope: string, keyHash: string) {
    return { pk: keys.idempotency(scope, keyHash), sk: keys.idempotencySk };
  }

  async begin(
    scope: string,
    keyHash: string,
    fingerprint: string,
    emailId: string,
    nowMs: number,
  ): Promise<IdempotencyBegin> {
    const nowSeconds = Math.floor(nowMs / 1000);
    if (
      await writeIf(
        this.db,
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...this.key(scope, keyHash),
            fingerprint,
            state: 'in_progress',
            email_id: emailId,
            started_at: nowMs,
            expires_at: Math.floor((nowMs + IDEMPOTENCY_TTL_MS) / 1000),
          },
          // Free, or expired (TTL deletes within days, not at once).
          ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
          ExpressionAttributeValues: { ':now': nowSeconds },
        }),
      )
    )
      return { outcome: 'new' };
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(scope, keyHash), ConsistentRead: true }),
    );
    if (!Item) return { outcome: 'in_progress' }; // given back meanwhile: the client retries
    // The SDK retried a claim whose answer was lost, and the retry found the first try's item: ours.
    if (Item.email_id === emailId && Item.state === 'in_progress') return { outcome: 'new' };
    if (Item.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    if (Item.state === 'done') return { outcome: 'replay', response: JSON.parse(String(Item.response)) };
    const startedAt = Number(Item.started_at);
    if (startedAt > nowMs - IDEMPOTENCY_LEASE_MS) return { outcome: 'in_progress' };
    // The request holding it died: one retry takes it over (conditional on the old start time).
    if (
      !(await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(scope, keyHash),
          UpdateExpression: 'SET started_at = :now',
          ConditionExpression: 'started_at = :then AND #state = :running',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':now': nowMs, ':then': startedAt, ':running': 'in_progress' },
        }),
      ))
    )
      return { outcome: 'in_progress' };
    return { outcome: 'resume', emailId: String(Item.email_id) };
  }

  async complete(
    scope: string,
    keyHash: string,
    emailId: string,
    response: StoredResponse,
  ): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(scope, keyHash),
        UpdateExpression: 'SET #state = :done, #response = :response',
        ConditionExpression: 'email_id = :id',
        ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
        ExpressionAttributeValues: {
          ':done': 'done',
          ':response': JSON.stringify(response),
          ':id': emailId,
        },
      }),
    );
  }

  async abandon(scope: string, keyHash: string, emailId: string): Promise<void> {
    await writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: this.key(scope, keyHash),
        ConditionExpression: 'email_id = :id',
        ExpressionAttributeValues: { ':id': emailId },
      }),
    );
  }
}
