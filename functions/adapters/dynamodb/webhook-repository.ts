import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { PageQuery } from '../../shared/list.js';
import {
  ATTEMPT_ID_PREFIX,
  MESSAGE_ID_PREFIX,
  WEBHOOK_ID_PREFIX,
  type Webhook,
  type WebhookAttempt,
  type WebhookMessage,
} from '../../webhooks/model.js';
import type { WebhookRepository } from '../../webhooks/ports.js';
import { newestFirstMerged, newestFirstPage, pause, queryPages, writeIf } from './client.js';
import {
  keys,
  shardOf,
  TTL_ATTRIBUTE,
  WEBHOOK_MESSAGE_RETENTION_DAYS,
  WEBHOOK_MESSAGE_SHARDS,
} from './table.js';

type Item = Record<string, unknown>;

export const toWebhook = (item: Item): Webhook => {
  const webhook: Webhook = {
    id: String(item.id),
    endpoint: String(item.endpoint),
    events: (item.events ?? []) as Webhook['events'],
    status: item.status === 'disabled' ? 'disabled' : 'enabled',
    created_at: String(item.created_at),
    signing_secret: String(item.signing_secret),
  };
  if (item.previous_secret) webhook.previous_secret = item.previous_secret as Webhook['previous_secret'];
  if (item.disabled_reason) webhook.disabled_reason = String(item.disabled_reason);
  if (item.failing_since) webhook.failing_since = String(item.failing_since);
  if (item.failures) webhook.failures = Number(item.failures);
  if (item.paused_until) webhook.paused_until = String(item.paused_until);
  if (item.trips) webhook.trips = Number(item.trips);
  if (item.probe_at) webhook.probe_at = String(item.probe_at);
  if (item.held_at) webhook.held_at = String(item.held_at);
  return webhook;
};

const toMessage = (item: Item): WebhookMessage => ({
  id: String(item.id),
  webhook_id: String(item.webhook_id),
  type: item.type as WebhookMessage['type'],
  created_at: String(item.created_at),
  status: item.status as WebhookMessage['status'],
  next_attempt_at: item.next_attempt_at ? String(item.next_attempt_at) : null,
  attempts: Number(item.attempts ?? 0),
  body: String(item.body),
});

const toAttempt = (item: Item): WebhookAttempt => ({
  id: String(item.id),
  message_id: String(item.message_id),
  sent_at: String(item.sent_at),
  http_status_code: Number(item.http_status_code ?? 0),
  duration_ms: Number(item.duration_ms ?? 0),
  response: String(item.response ?? ''),
});

/**
 * Webhook endpoints, their messages and attempts in the single table (see table.ts). An endpoint's
 * item holds its secrets, so it is read only by the functions that sign or show them.
 *
 * **An endpoint's messages are sharded.** One partition takes 1,000 write units a second and a
 * message costs about 2.5 (its put, then its state and its attempt), so one partition per endpoint
 * stopped an endpoint at about 400 messages a second. A message and its attempts go to one of the
 * WEBHOOK_MESSAGE_SHARDS (64) partitions, `WEBHOOK#<id>#<shard>`, the shard a hash of the message
 * id (FNV-1a, as emails' index shards): 25,600 messages a second an endpoint. Reading one message or
 * its attempts goes to its shard; listing merges every shard newest first (client.ts
 * newestFirstMerged). Messages written before sharding stay in `WEBHOOK#<id>`, read as one more
 * partition of the merge and as the fallback of a single message's read; a message of then
 * attempted or replayed since has its new state in its shard, which the merge (shards first) and
 * the read take over the old one. The count is fixed (not `listingShards`): a message is read back
 * from the shard its id names.
 */
/** What an endpoint starting afresh (enabled again, or given a new URL) loses: its failing mark and its breaker. */
const FRESH_REMOVES = ['failing_since', 'failures', 'paused_until', 'trips', 'probe_at'] as const;

export class DynamoWebhookRepository implements WebhookRepository {
  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly tableName: string,
    /** Partitions an endpoint's messages are spread over (tests use fewer). */
    private readonly layout: { shards: number } = { shards: WEBHOOK_MESSAGE_SHARDS },
    private readonly now: () => Date = () => new Date(),
  ) {}

  protected key(id: string) {
    return { pk: keys.webhooks, sk: keys.webhook(id) };
  }

  /** The partition of this message and its attempts. */
  private messagePartition(webhookId: string, messageId: string) {
    return keys.webhookShard(webhookId, keys.shard(shardOf(messageId, this.layout.shards)));
  }

  /** Every partition of an endpoint's messages: its shards, then the unsharded one of earlier versions. */
  private messagePartitions(webhookId: string) {
    return [
      ...Array.from({ length: this.layout.shards }, (_, i) => keys.webhookShard(webhookId, keys.shard(i))),
      keys.webhook(webhookId),
    ];
  }

  private expiresAt() {
    return Math.floor(this.now().getTime() / 1000) + WEBHOOK_MESSAGE_RETENTION_DAYS * 86_400;
  }

  async create(webhook: Webhook): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...this.key(webhook.id), ...webhook },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(id: string): Promise<Webhook | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(id), ConsistentRead: true }),
    );
    return Item ? toWebhook(Item) : null;
  }

  async list(query: PageQuery) {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.webhooks,
        prefix: keys.webhook(`${WEBHOOK_ID_PREFIX}_`),
        sortKeyOf: keys.webhook,
      },
      query,
    );
    return { data: items.map(toWebhook), has_more };
  }

  async all(): Promise<Webhook[]> {
    const found: Webhook[] = [];
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      // Strongly consistent: an endpoint saved before an event is raised is seen by it.
      ConsistentRead: true,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.webhooks, ':prefix': keys.webhookPrefix },
    }))
      found.push(...page.map(toWebhook));
    return found;
  }

  async save(webhook: Webhook, { fresh = false }: { fresh?: boolean } = {}): Promise<boolean> {
    const set: Record<string, unknown> = {
      endpoint: webhook.endpoint,
      events: webhook.events,
      status: webhook.status,
      signing_secret: webhook.signing_secret,
    };
    const remove: string[] = fresh ? [...FRESH_REMOVES] : [];
    for (const optional of ['previous_secret', 'disabled_reason'] as const)
      if (webhook[optional] === undefined) remove.push(optional);
      else set[optional] = webhook[optional];
    const names = Object.fromEntries([...Object.keys(set), ...remove].map((name) => [`#${name}`, name]));
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(webhook.id),
        UpdateExpression: [
          `SET ${Object.keys(set)
            .map((name) => `#${name} = :${name}`)
            .join(', ')}`,
          remove.length ? `REMOVE ${remove.map((name) => `#${name}`).join(', ')}` : '',
        ].join(' '),
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: Object.fromEntries(
          Object.entries(set).map(([name, value]) => [`:${name}`, value]),
        ),
      }),
    );
  }

  async delete(id: string): Promise<boolean> {
    return writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: this.key(id),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  }

  async recordAttempt(message: WebhookMessage, attempt?: WebhookAttempt): Promise<void> {
    const expires = this.expiresAt();
    const pk = this.messagePartition(message.webhook_id, message.id);
    const items: Item[] = [{ pk, sk: keys.webhookMessage(message.id), ...message, [TTL_ATTRIBUTE]: expires }];
    if (attempt)
      items.push({
        pk,
        sk: keys.webhookAttempt(message.id, attempt.id),
        ...attempt,
        [TTL_ATTRIBUTE]: expires,
      });
    if (items.length === 1) {
      await this.db.send(new PutCommand({ TableName: this.tableName, Item: items[0] }));
      return;
    }
    // Both in one request; what DynamoDB leaves unprocessed is written again.
    let pending = items.map((Item) => ({ PutRequest: { Item } }));
    for (let round = 0; pending.length; round++) {
      if (round > 5) throw new Error('DynamoDB did not take the attempt record after 5 retries');
      if (round) await pause(25 * 2 ** round);
      const { UnprocessedItems } = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
      );
      pending = (UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
  }

  async getMessage(webhookId: string, messageId: string): Promise<WebhookMessage | null> {
    // Its shard; then the partition of messages written before sharding.
    for (const pk of [this.messagePartition(webhookId, messageId), keys.webhook(webhookId)]) {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: { pk, sk: keys.webhookMessage(messageId) } }),
      );
      if (Item) return toMessage(Item);
    }
    return null;
  }

  async listMessages(webhookId: string, query: PageQuery) {
    const { items, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        partitionKey: 'pk',
        sortKey: 'sk',
        partitions: this.messagePartitions(webhookId),
        prefix: keys.webhookMessage(`${MESSAGE_ID_PREFIX}_`),
        sortKeyOf: keys.webhookMessage,
      },
      query,
    );
    return { data: items.map(toMessage), has_more };
  }

  async listAttempts(webhookId: string, messageId: string, query: PageQuery) {
    // Its shard, and the partition of earlier versions (a message of then attempted since has both).
    const { items, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        partitionKey: 'pk',
        sortKey: 'sk',
        partitions: [this.messagePartition(webhookId, messageId), keys.webhook(webhookId)],
        prefix: `${keys.webhookAttemptPrefix(messageId)}${ATTEMPT_ID_PREFIX}_`,
        sortKeyOf: (id) => keys.webhookAttempt(messageId, id),
      },
      query,
    );
    return { data: items.map(toAttempt), has_more };
  }
}
