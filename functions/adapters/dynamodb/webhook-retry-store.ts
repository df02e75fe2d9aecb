import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type Delivery, parseDelivery } from '../../webhooks/model.js';
import type { ParkedRetry, WebhookRetryStore } from '../../webhooks/ports.js';
import { pause, queryPages } from './client.js';
import { keys, WEBHOOK_RETRY_SHARDS, webhookRetryShard } from './table.js';

type Item = Record<string, unknown>;

/**
 * Parked webhook retries (table.ts): one item per retry, `WHRETRY#<shard>` / `<due at>#<msg id>`,
 * holding the message to put back on the queue. Reading what is due is one Query per shard (sort
 * key up to the time), 100 items a page; removing is BatchWriteItem, 25 deletes a call.
 */
export class DynamoWebhookRetryStore implements WebhookRetryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private key(retry: Pick<ParkedRetry, 'due_at' | 'message_id'>) {
    return {
      pk: keys.webhookRetry(webhookRetryShard(retry.message_id)),
      sk: keys.webhookRetrySk(retry.due_at, retry.message_id),
    };
  }

  async park(retry: ParkedRetry & { delivery: Delivery }): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...this.key(retry),
          due_at: retry.due_at,
          message_id: retry.message_id,
          delivery: JSON.stringify(retry.delivery),
        },
      }),
    );
  }

  /** Shard after shard, each up to its share of `limit` (the shards fill evenly: a digest picks one). */
  async *due(until: string, limit: number): AsyncIterable<ParkedRetry[]> {
    for (const shard of this.dueByPartition(until, limit)) yield* shard;
  }

  /** One reader per shard, each up to its share of `limit`, oldest due first. */
  dueByPartition(until: string, limit: number): AsyncIterable<ParkedRetry[]>[] {
    const perShard = Math.ceil(limit / WEBHOOK_RETRY_SHARDS);
    return Array.from({ length: WEBHOOK_RETRY_SHARDS }, (_, shard) => this.dueIn(shard, until, perShard));
  }

  private async *dueIn(shard: number, until: string, limit: number): AsyncIterable<ParkedRetry[]> {
    let left = limit;
    for await (const items of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk < :bound',
      ExpressionAttributeValues: {
        ':pk': keys.webhookRetry(shard),
        ':bound': keys.webhookRetryDueBound(until),
      },
      Limit: Math.min(100, left),
    })) {
      const page = items.slice(0, left).map(toRetry);
      if (page.length) yield page;
      left -= page.length;
      if (left <= 0) break;
    }
  }

  async remove(retries: readonly Pick<ParkedRetry, 'due_at' | 'message_id'>[]): Promise<void> {
    await Promise.all(
      Array.from({ length: Math.ceil(retries.length / 25) }, async (_, i) => {
        let pending = retries
          .slice(i * 25, i * 25 + 25)
          .map((retry) => ({ DeleteRequest: { Key: this.key(retry) } }));
        // What DynamoDB leaves unprocessed is sent again.
        for (let round = 0; pending.length; round++) {
          if (round > 5)
            throw new Error('DynamoDB did not take the removal of parked retries after 5 retries');
          if (round) await pause(25 * 2 ** round);
          const { UnprocessedItems } = await this.db.send(
            new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
          );
          pending = (UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
        }
      }),
    );
  }
}

const toRetry = (item: Item): ParkedRetry => {
  const sk = String(item.sk);
  return {
    due_at: String(item.due_at ?? sk.slice(0, sk.indexOf('#'))),
    message_id: String(item.message_id ?? keys.messageIdOfRetrySk(sk)),
    delivery: typeof item.delivery === 'string' ? (parseDelivery(item.delivery) ?? null) : null,
  };
};
