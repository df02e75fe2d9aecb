import { randomBytes } from 'node:crypto';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Delivery, parseDelivery, RETRY_WINDOW_MS } from '../../webhooks/model.js';
import type { HeldMessage, WebhookHoldStore } from '../../webhooks/ports.js';
import { pause, queryPages } from './client.js';
import { keys, shardOf, TTL_ATTRIBUTE, WEBHOOK_HELD_SHARDS } from './table.js';

type Item = Record<string, unknown>;

/** How long after its retry window a held item is kept at most (its TTL): an endpoint deleted meanwhile leaves nothing behind. */
const HELD_BACKSTOP_MS = 86_400_000;

/**
 * Messages held by an endpoint's open breaker (webhooks/held.ts): one item each,
 * `WHHELD#<endpoint>#<shard>` / `<event time>#<msg id>#<hold id>`, holding the message to put back on the
 * queue. An endpoint's shard is a digest of the message id, so holding spreads over
 * WEBHOOK_HELD_SHARDS partitions; each is read oldest event first (a Query, 100 a page).
 */
export class DynamoWebhookHoldStore implements WebhookHoldStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Partitions an endpoint's held messages are spread over (tests use fewer). */
    private readonly shards = WEBHOOK_HELD_SHARDS,
  ) {}

  private key(held: Pick<HeldMessage, 'webhook_id' | 'message_id' | 'created_at' | 'hold_id'>) {
    return {
      pk: keys.webhookHeld(held.webhook_id, shardOf(held.message_id, this.shards)),
      sk: keys.webhookHeldSk(held.created_at, held.message_id, held.hold_id),
    };
  }

  async hold(deliveries: readonly Delivery[]): Promise<void> {
    await this.write(
      deliveries.map((delivery) => ({
        PutRequest: {
          Item: {
            ...this.key({ ...delivery, hold_id: newHoldId() }),
            webhook_id: delivery.webhook_id,
            message_id: delivery.message_id,
            created_at: delivery.created_at,
            delivery: JSON.stringify(delivery),
            [TTL_ATTRIBUTE]: Math.floor(
              ((Date.parse(delivery.created_at) || Date.now()) + RETRY_WINDOW_MS + HELD_BACKSTOP_MS) / 1000,
            ),
          },
        },
      })),
    );
  }

  oldest(webhookId: string, limit: number): AsyncIterable<HeldMessage[]>[] {
    const perShard = Math.ceil(limit / this.shards);
    return Array.from({ length: this.shards }, (_, shard) => this.oldestIn(webhookId, shard, perShard));
  }

  private async *oldestIn(webhookId: string, shard: number, limit: number): AsyncIterable<HeldMessage[]> {
    let left = limit;
    for await (const items of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.webhookHeld(webhookId, shard) },
      Limit: Math.min(100, left),
    })) {
      const page = items.slice(0, left).map(toHeld);
      if (page.length) yield page;
      left -= page.length;
      if (left <= 0) break;
    }
  }

  async remove(held: readonly HeldMessage[]): Promise<void> {
    await this.write(held.map((item) => ({ DeleteRequest: { Key: this.key(item) } })));
  }

  /** 25 a BatchWriteItem, side by side; what DynamoDB leaves unprocessed is sent again. */
  private async write(requests: Item[]): Promise<void> {
    await Promise.all(
      Array.from({ length: Math.ceil(requests.length / 25) }, async (_, i) => {
        let pending = requests.slice(i * 25, i * 25 + 25);
        for (let round = 0; pending.length; round++) {
          if (round > 5) throw new Error('DynamoDB did not take the held webhook messages after 5 retries');
          if (round) await pause(25 * 2 ** round);
          const { UnprocessedItems } = await this.db.send(
            new BatchWriteCommand({ RequestItems: { [this.tableName]: pending as never } }),
          );
          pending = (UnprocessedItems?.[this.tableName] ?? []) as Item[];
        }
      }),
    );
  }
}

/** A hold's own id: 12 random base64url characters. */
const newHoldId = () => randomBytes(9).toString('base64url');

/** `<event time>#<msg id>#<hold id>` (the time holds no `#`, nor do the ids). */
const toHeld = (item: Item): HeldMessage => {
  const [createdAt = '', messageId = '', holdId] = String(item.sk).split('#');
  return {
    webhook_id: String(item.webhook_id ?? String(item.pk).split('#')[1]),
    message_id: String(item.message_id ?? messageId),
    created_at: String(item.created_at ?? createdAt),
    delivery: typeof item.delivery === 'string' ? (parseDelivery(item.delivery) ?? null) : null,
    ...(holdId ? { hold_id: holdId } : {}),
  };
};
