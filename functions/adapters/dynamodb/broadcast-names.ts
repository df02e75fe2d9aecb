import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BroadcastNames } from '../../metrics/ports.js';
import { batchGetAll } from './client.js';
import { keys } from './table.js';

/**
 * The broadcasts' names, read from their items (`BROADCASTS` / `BROADCAST#<id>`, attribute `name`:
 * the broadcast item of issue 41's design) by BatchGetItem, only the id and the name: what the
 * email metrics name a row by broadcast with (metrics/ports.ts).
 */
export class DynamoBroadcastNames implements BroadcastNames {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async names(ids: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (!unique.length) return new Map();
    const items = await batchGetAll(
      this.db,
      this.tableName,
      unique.map((id) => ({ pk: keys.broadcasts, sk: keys.broadcast(id) })),
      'id, #name',
      undefined,
      { '#name': 'name' },
    );
    const names = new Map<string, string>();
    for (const item of items)
      if (typeof item.id === 'string') names.set(item.id, typeof item.name === 'string' ? item.name : '');
    return names;
  }
}
