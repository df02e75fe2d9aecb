import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { WebhookEvent } from '../../webhooks/model.js';
import type { KeptEvent, UnpublishedEvents } from '../../webhooks/ports.js';
import { pause, queryPages } from './client.js';
import { keys, shardOf, UNPUBLISHED_EVENT_SHARDS } from './table.js';

type Item = Record<string, unknown>;

/**
 * Events kept because they could not be published when raised (webhooks/republish.ts): one item an
 * event, `WHUNPUB#<shard>` / `<created at>#<event key>`, the shard a digest of its key, holding the
 * event. Keeping the same event again writes the same item. Reading is one Query per shard, 100
 * items a page, oldest first; removing is BatchWriteItem, 25 deletes a call.
 *
 * `write`: how an event is kept, one call an event. UpdateItem by default (every background
 * function that raises events may already use it); PutItem for the domain routes, whose roles have
 * PutItem and not UpdateItem, so keeping events adds no grant to any role.
 */
export class DynamoUnpublishedEventStore implements UnpublishedEvents {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly write: 'UpdateItem' | 'PutItem' = 'UpdateItem',
  ) {}

  private key(event: Pick<WebhookEvent, 'created_at' | 'key'>) {
    return {
      pk: keys.unpublishedEvent(shardOf(event.key, UNPUBLISHED_EVENT_SHARDS)),
      sk: keys.unpublishedEventSk(event.created_at, event.key),
    };
  }

  async keep(events: readonly WebhookEvent[]): Promise<void> {
    await Promise.all(events.map((event) => this.keepOne(event)));
  }

  private async keepOne(event: WebhookEvent): Promise<void> {
    const body = JSON.stringify(event);
    if (this.write === 'PutItem')
      await this.db.send(
        new PutCommand({ TableName: this.tableName, Item: { ...this.key(event), event: body } }),
      );
    else
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(event),
          UpdateExpression: 'SET #e = :e',
          ExpressionAttributeNames: { '#e': 'event' },
          ExpressionAttributeValues: { ':e': body },
        }),
      );
  }

  keptByPartition(limit: number): AsyncIterable<KeptEvent[]>[] {
    const perShard = Math.ceil(limit / UNPUBLISHED_EVENT_SHARDS);
    return Array.from({ length: UNPUBLISHED_EVENT_SHARDS }, (_, shard) => this.keptIn(shard, perShard));
  }

  private async *keptIn(shard: number, limit: number): AsyncIterable<KeptEvent[]> {
    let left = limit;
    for await (const items of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.unpublishedEvent(shard) },
      Limit: Math.min(100, left),
    })) {
      const page = items.slice(0, left).map(toKept);
      if (page.length) yield page;
      left -= page.length;
      if (left <= 0) break;
    }
  }

  async remove(events: readonly KeptEvent[]): Promise<void> {
    await Promise.all(
      Array.from({ length: Math.ceil(events.length / 25) }, async (_, i) => {
        let pending = events
          .slice(i * 25, i * 25 + 25)
          .map((kept) => ({ DeleteRequest: { Key: refKey(kept.ref) } }));
        // What DynamoDB leaves unprocessed is sent again.
        for (let round = 0; pending.length; round++) {
          if (round > 5) throw new Error('DynamoDB did not take the removal of kept events after 5 retries');
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

/** A kept event's reference is its item's key. */
const refKey = (ref: string) => JSON.parse(ref) as { pk: string; sk: string };

const toKept = (item: Item): KeptEvent => ({
  ref: JSON.stringify({ pk: item.pk, sk: item.sk }),
  event: typeof item.event === 'string' ? parseEvent(item.event) : null,
});

function parseEvent(text: string): WebhookEvent | null {
  try {
    const event = JSON.parse(text) as Partial<WebhookEvent>;
    return typeof event.type === 'string' &&
      typeof event.created_at === 'string' &&
      typeof event.key === 'string' &&
      typeof event.data === 'object' &&
      event.data !== null
      ? (event as WebhookEvent)
      : null;
  } catch {
    return null;
  }
}
