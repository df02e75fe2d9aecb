import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { RequestLogEntry } from '../../request-logs/model.js';
import type { ListLogsQuery, RequestLogRepository } from '../../request-logs/ports.js';
import { batchGetAll, newestFirstMerged, pause } from './client.js';
import {
  bodiesFrom,
  bodiesPlace,
  groupItems,
  isLegacyItem,
  LOG_ATTRIBUTES,
  LOG_GROUP,
  legacyEntryOf,
  summaryOf,
} from './request-log-items.js';
import { INDEXES, keys, LOG_SHARDS, shardOf } from './table.js';

type Item = Record<string, unknown>;

const keyOf = (id: string) => ({ pk: keys.logs(shardOf(id, LOG_SHARDS)), sk: keys.logListed(id) });

/**
 * Request logs in the single table, as request-log-items.ts lays them out: each log a compact item
 * in one of LOG_SHARDS time-sorted partitions of the table (`LOGS#nn`), listed with the shard merge;
 * an error's log also in the status index; bodies compressed by groups of logs written together,
 * in slices over the group's items. Items expire by TTL. Logs of the previous layout (`LOG#<id>`)
 * are still read by id and in a status-filtered list.
 */
export class DynamoRequestLogRepository implements RequestLogRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Unused since logs are listed from the table (kept for the repositories' wiring). */
    _timeIndex?: string,
  ) {}

  /** The items of these logs, by groups of LOG_GROUP (each group's bodies compressed together). */
  itemsOf(entries: readonly RequestLogEntry[], retentionDays: number): Item[][] {
    // A batch may not name an item twice (a line delivered twice in one batch): one each, in id order.
    const unique = [...new Map(entries.map((entry) => [entry.id, entry])).values()].sort((a, b) =>
      a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
    );
    const groups: Item[][] = [];
    for (let i = 0; i < unique.length; i += LOG_GROUP)
      groups.push(groupItems(unique.slice(i, i + LOG_GROUP), retentionDays));
    return groups;
  }

  /** Two groups a BatchWriteItem (at most 24 items), side by side; what is left unprocessed is retried with backoff. */
  async put(entries: readonly RequestLogEntry[], retentionDays: number): Promise<void> {
    const groups = this.itemsOf(entries, retentionDays);
    const calls: Item[][] = [];
    for (let i = 0; i < groups.length; i += 2) calls.push(groups.slice(i, i + 2).flat());
    await Promise.all(calls.map((items) => this.write(items)));
  }

  private async write(items: Item[]): Promise<void> {
    let pending = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) {
        if (attempt > 6) throw new Error('DynamoDB did not take the request logs after 6 retries');
        await pause(25 * 2 ** attempt);
      }
      const result = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
      );
      pending = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
  }

  async list(query: ListLogsQuery): Promise<{ data: RequestLogEntry[]; has_more: boolean }> {
    const shards = Array.from({ length: LOG_SHARDS }, (_, shard) => shard);
    const sorted = { prefix: keys.logListedPrefix, sortKeyOf: keys.logListed };
    if (query.status === undefined || query.status === '2xx') {
      // The table's own partitions: every log, or the 2xx ones (nearly all) with the others left out.
      const { items, has_more } = await newestFirstMerged(
        this.db,
        {
          TableName: this.tableName,
          partitionKey: 'pk',
          sortKey: 'sk',
          partitions: shards.map((shard) => keys.logs(shard)),
          ...sorted,
          ...(query.status
            ? {
                filter: {
                  expression: '#status BETWEEN :low2xx AND :high2xx',
                  names: { '#status': LOG_ATTRIBUTES.status },
                  values: { ':low2xx': 200, ':high2xx': 299 },
                },
              }
            : {}),
        },
        query,
      );
      return { data: items.map(summaryOf), has_more };
    }
    const index = INDEXES.emailsByStatus;
    const { items: page, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        IndexName: index.name,
        partitionKey: index.partitionKey,
        sortKey: index.sortKey,
        partitions: shards.map((shard) => keys.logsWithStatus(query.status as string, shard)),
        ...sorted,
      },
      query,
    );
    if (page.length === 0) return { data: [], has_more };
    const found = await batchGetAll(
      this.db,
      this.tableName,
      page.map((entry) => ({ pk: entry.pk, sk: entry.sk })),
    );
    const byKey = new Map(found.map((item) => [`${item.pk}|${item.sk}`, item]));
    const data: RequestLogEntry[] = [];
    for (const entry of page) {
      const item = byKey.get(`${entry.pk}|${entry.sk}`);
      // Missing: expired between the index read and this one (or not visible yet to this read).
      if (item)
        data.push({
          ...(isLegacyItem(item) ? legacyEntryOf(item) : summaryOf(item)),
          request_body: null,
          response_body: null,
        });
    }
    return { data, has_more };
  }

  async get(id: string): Promise<RequestLogEntry | null> {
    const item = await this.getItem(keyOf(id));
    if (!item) {
      const legacy = await this.getItem({ pk: keys.log(id), sk: keys.logSk });
      return legacy ? legacyEntryOf(legacy) : null;
    }
    const place = bodiesPlace(item);
    const others = place.holders.filter((holder) => holder !== id);
    const found = others.length
      ? await batchGetAll(
          this.db,
          this.tableName,
          others.map((holder) => keyOf(holder)),
        )
      : [];
    const bySk = new Map(found.map((holder) => [String(holder.sk), holder]));
    bySk.set(String(item.sk), item);
    const [request_body, response_body] = bodiesFrom(
      place,
      place.holders.map((holder) => bySk.get(keys.logListed(holder))),
    );
    return { ...summaryOf(item), request_body, response_body };
  }

  private async getItem(key: { pk: string; sk: string }): Promise<Item | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key }));
    return Item;
  }
}
