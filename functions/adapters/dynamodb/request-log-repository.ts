import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { RequestLogEntry } from '../../request-logs/model.js';
import { statusClassOf } from '../../request-logs/model.js';
import type { ListLogsQuery, RequestLogRepository } from '../../request-logs/ports.js';
import { batchGetAll, newestFirstMerged, pause } from './client.js';
import { INDEXES, keys, LOG_SHARDS, shardOf, TTL_ATTRIBUTE } from './table.js';

const DAY_SECONDS = 86_400;

type Item = Record<string, unknown>;

/**
 * Bodies over 1 KB are stored deflated (binary), by the writer, never in the request: JSON bodies
 * deflate 3 to 10 times, and an item's write units go by its size (a 7 KB send body: 9 units
 * plain, 3 deflated).
 */
const DEFLATE_ABOVE = 1024;
const pack = (text: string | null) =>
  text !== null && text.length > DEFLATE_ABOVE ? deflateRawSync(text) : text;
const unpack = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : typeof value === 'string'
      ? value
      : inflateRawSync(value as Uint8Array).toString('utf8');

const toEntry = (item: Item): RequestLogEntry => ({
  id: String(item.id),
  created_at: String(item.created_at),
  method: String(item.method),
  endpoint: String(item.endpoint),
  response_status: Number(item.response_status),
  user_agent: (item.user_agent as string | null | undefined) ?? null,
  api_key_id: (item.api_key_id as string | null | undefined) ?? null,
  duration_ms: Number(item.duration_ms),
  request_body: unpack(item.request_body),
  response_body: unpack(item.response_body),
});

/**
 * Request logs in the single table (table.ts): each log its own item `LOG#<id>` (writes spread
 * over the table's partitions by id), listed through the two listing indexes under LOG_SHARDS
 * partitions each (`LOGS#nn`, and `LOGS#<class>#nn` for the status filter), read with the shard
 * merge, then the page's items with one BatchGetItem (read whole: a read costs by the item's size
 * whatever it returns). Items expire by TTL.
 */
export class DynamoRequestLogRepository implements RequestLogRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The time index's name at this step of the table's upgrade (email-keys.ts TableLayout). */
    private readonly timeIndex: string = INDEXES.emailsByTime.name,
  ) {}

  itemOf(entry: RequestLogEntry, retentionDays: number): Item {
    const shard = shardOf(entry.id, LOG_SHARDS);
    const listed = keys.logListed(entry.id);
    return {
      pk: keys.log(entry.id),
      sk: keys.logSk,
      [INDEXES.emailsByTime.partitionKey]: keys.logs(shard),
      [INDEXES.emailsByTime.sortKey]: listed,
      [INDEXES.emailsByStatus.partitionKey]: keys.logsWithStatus(statusClassOf(entry.response_status), shard),
      [INDEXES.emailsByStatus.sortKey]: listed,
      ...entry,
      request_body: pack(entry.request_body),
      response_body: pack(entry.response_body),
      [TTL_ATTRIBUTE]: Math.floor(Date.parse(entry.created_at) / 1000) + retentionDays * DAY_SECONDS,
    };
  }

  /** 25 items a BatchWriteItem, side by side; what DynamoDB leaves unprocessed is retried with backoff. */
  async put(entries: readonly RequestLogEntry[], retentionDays: number): Promise<void> {
    // A batch may not name an item twice (a line delivered twice in one batch): one each.
    const unique = [...new Map(entries.map((entry) => [entry.id, entry])).values()];
    const calls: Item[][] = [];
    for (let i = 0; i < unique.length; i += 25)
      calls.push(unique.slice(i, i + 25).map((entry) => this.itemOf(entry, retentionDays)));
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
    const index = query.status ? INDEXES.emailsByStatus : INDEXES.emailsByTime;
    const partitions = Array.from({ length: LOG_SHARDS }, (_, shard) =>
      query.status ? keys.logsWithStatus(query.status, shard) : keys.logs(shard),
    );
    const { items: page, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        IndexName: query.status ? index.name : this.timeIndex,
        partitionKey: index.partitionKey,
        sortKey: index.sortKey,
        partitions,
        prefix: keys.logListedPrefix,
        sortKeyOf: keys.logListed,
      },
      query,
    );
    if (page.length === 0) return { data: [], has_more };
    const found = await batchGetAll(
      this.db,
      this.tableName,
      page.map((entry) => ({ pk: entry.pk, sk: keys.logSk })),
    );
    const byPk = new Map(found.map((item) => [keys.log(String(item.id)), item]));
    const data: RequestLogEntry[] = [];
    for (const entry of page) {
      const item = byPk.get(String(entry.pk));
      // Missing: expired between the index read and this one (or not visible yet to this read).
      if (item) data.push({ ...toEntry(item), request_body: null, response_body: null });
    }
    return { data, has_more };
  }

  async get(id: string): Promise<RequestLogEntry | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.log(id), sk: keys.logSk } }),
    );
    return Item ? toEntry(Item) : null;
  }
}
