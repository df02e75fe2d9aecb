import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BroadcastTotals, BroadcastTotalsReader } from '../../broadcasts/broadcast.js';
import { queryPages } from './client.js';
import { keys } from './table.js';

const ZERO: BroadcastTotals = {
  sent: 0,
  delivered: 0,
  opened: 0,
  unique_opened: 0,
  clicked: 0,
  unique_clicked: 0,
  bounced: 0,
  complained: 0,
  unsubscribed: 0,
  suppressed: 0,
  ended: 0,
};

/**
 * INTERIM, to be replaced by the tally's own reader (adapters/dynamodb/broadcast-tally.ts,
 * `broadcastTally(table)`): a broadcast's totals, its BROADCAST_TOTAL_SHARDS counter items
 * (`TOTALS#<shard>` in its partition) read in one Query and summed.
 */
export class InterimBroadcastTotals implements BroadcastTotalsReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async totals(broadcastId: string): Promise<BroadcastTotals> {
    const sum = { ...ZERO };
    for await (const items of queryPages(this.db, {
      TableName: this.tableName,
      ConsistentRead: true,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :totals)',
      ExpressionAttributeValues: { ':pk': keys.broadcastOf(broadcastId), ':totals': 'TOTALS#' },
    }))
      for (const item of items)
        for (const name of Object.keys(ZERO) as (keyof BroadcastTotals)[])
          sum[name] += Number(item[name] ?? 0);
    return sum;
  }
}

export const interimBroadcastTotals = (t: { db: DynamoDBDocumentClient; name: string }) =>
  new InterimBroadcastTotals(t.db, t.name);
