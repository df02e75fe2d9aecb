import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { LOG_FILTER_READ_BOUND, type RequestLogEntry } from '../../request-logs/model.js';
import type { ListLogsQuery, LogPage, RequestLogRepository } from '../../request-logs/ports.js';
import type { PageQuery } from '../../shared/list.js';
import { batchGetAll, newestFirstMerged, pause } from './client.js';
import { filteredLogPage, hasLogFilter } from './request-log-filter.js';
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
    /**
     * The time index at this step of the table's upgrade: where the logs of the previous layout
     * are listed (after every log of this layout, as they were all written before it).
     */
    private readonly timeIndex: string = INDEXES.emailsByTime.name,
    /** The most logs a filtered page reads (tests lower it). */
    private readonly filterReadBound: number = LOG_FILTER_READ_BOUND,
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

  async list(query: ListLogsQuery): Promise<LogPage> {
    if (hasLogFilter(query)) return filteredLogPage(this.db, this.tableName, query, this.filterReadBound);
    if (query.status === undefined || query.status === '2xx') return this.listWithLegacy(query);
    // The errors (either layout's: both put them in the status index).
    const shards = Array.from({ length: LOG_SHARDS }, (_, shard) => shard);
    const sorted = { prefix: keys.logListedPrefix, sortKeyOf: keys.logListed };
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

  /**
   * Every log, or the 2xx ones, newest first: this layout's from the table's own partitions (the
   * 2xx ones with the others filtered out), then those of the previous layout, which were all
   * written before any of this one: from the time index (every log) or the status index (the 2xx
   * ones; this layout puts only errors there). So the logs of before an upgrade stay listed until
   * their TTL takes them, and a list that ends among this layout's logs reads nothing more.
   */
  private async listWithLegacy(
    query: ListLogsQuery,
  ): Promise<{ data: RequestLogEntry[]; has_more: boolean }> {
    // An offset counts only without a cursor (as newestFirstMerged reads it).
    const offset = query.after === undefined && query.before === undefined ? query.offset : 0;
    const wanted = offset + query.limit;
    const window = { ...query, offset: 0, limit: wanted };
    // Toward newer logs from a log of the previous layout: its newer ones first, then this layout's.
    if (query.before !== undefined && (await this.getItem({ pk: keys.log(query.before), sk: keys.logSk }))) {
      const old = await this.legacyPage(query.status, window);
      const left = wanted - old.items.length;
      const fresh = await this.currentPage(query.status, { ...window, limit: Math.max(1, left) });
      const items = [...(left > 0 ? fresh.items : []), ...old.items];
      const more = old.has_more || fresh.items.length > Math.max(0, left) || fresh.has_more;
      return { data: items.slice(offset, wanted), has_more: more };
    }
    const fresh = await this.currentPage(query.status, window);
    if (fresh.has_more || query.before !== undefined)
      return { data: fresh.items.slice(offset, wanted), has_more: fresh.has_more };
    // This layout's logs end here: the previous layout's follow, if any are left.
    const last = fresh.items.at(-1);
    const old = await this.legacyPage(query.status, {
      limit: Math.max(1, wanted - fresh.items.length),
      offset: 0,
      ...(last ? { after: last.id } : query.after !== undefined ? { after: query.after } : {}),
    });
    if (fresh.items.length >= wanted)
      return { data: fresh.items.slice(offset, wanted), has_more: old.items.length > 0 || old.has_more };
    return { data: [...fresh.items, ...old.items].slice(offset, wanted), has_more: old.has_more };
  }

  /** This layout's logs (every one, or the 2xx ones), newest first. */
  private async currentPage(status: ListLogsQuery['status'], page: PageQuery) {
    const { items, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        partitionKey: 'pk',
        sortKey: 'sk',
        partitions: Array.from({ length: LOG_SHARDS }, (_, shard) => keys.logs(shard)),
        prefix: keys.logListedPrefix,
        sortKeyOf: keys.logListed,
        ...(status
          ? {
              filter: {
                expression: '#status BETWEEN :low2xx AND :high2xx',
                names: { '#status': LOG_ATTRIBUTES.status },
                values: { ':low2xx': 200, ':high2xx': 299 },
              },
            }
          : {}),
      },
      page,
    );
    return { items: items.map(summaryOf), has_more };
  }

  /** The previous layout's logs (every one, or the 2xx ones), newest first, read from their items. */
  private async legacyPage(status: ListLogsQuery['status'], page: PageQuery) {
    const index = status ? INDEXES.emailsByStatus : { ...INDEXES.emailsByTime, name: this.timeIndex };
    const { items: entries, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        IndexName: index.name,
        partitionKey: index.partitionKey,
        sortKey: index.sortKey,
        partitions: Array.from({ length: LOG_SHARDS }, (_, shard) =>
          status ? keys.logsWithStatus(status, shard) : keys.logs(shard),
        ),
        prefix: keys.logListedPrefix,
        sortKeyOf: keys.logListed,
      },
      page,
    );
    // This layout's error logs are in the status index too, but never under 2xx.
    const legacy = entries.filter((entry) => entry.sk === keys.logSk);
    const found = legacy.length
      ? await batchGetAll(
          this.db,
          this.tableName,
          legacy.map((entry) => ({ pk: entry.pk, sk: entry.sk })),
        )
      : [];
    const byPk = new Map(found.map((item) => [String(item.pk), item]));
    const items: RequestLogEntry[] = [];
    for (const entry of legacy) {
      const item = byPk.get(String(entry.pk));
      if (item) items.push({ ...legacyEntryOf(item), request_body: null, response_body: null });
    }
    return { items, has_more };
  }

  private async getItem(key: { pk: string; sk: string }): Promise<Item | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key }));
    return Item;
  }
}
