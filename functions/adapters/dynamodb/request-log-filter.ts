import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { LOG_FILTER_READ_BOUND } from '../../request-logs/model.js';
import type { ListLogsQuery, LogPage } from '../../request-logs/ports.js';
import { mergeSorted, type SortedSource } from '../../shared/sorted-merge.js';
import { LOG_ATTRIBUTES, summaryOf } from './request-log-items.js';
import { keys, LOG_SHARDS } from './table.js';

type Item = Record<string, unknown>;

/*
 * `GET /v1/logs` filtered by method, path or key (our extensions): a filter on the logs' own
 * partitions (`LOGS#nn`, request-log-items.ts), each Query reading on from the page's cursor. No
 * index entry is written for them, so a log still costs its 1 write unit (at most 1.5): the price
 * is on the read, which is bounded. Each partition is read at most its share of
 * LOG_FILTER_READ_BOUND logs; a partition stopped at its share leaves the logs past where it
 * stopped unread, so the page keeps only the matches up to the first such place (every partition
 * was read that far), answers `has_more: true`, and, when it is not full, `scanned_to`: that
 * place, a cursor (`after`, or `before` paging toward newer logs) to read on from. Logs of the
 * layout before the compact one (its own partition each) are not in a filtered list.
 */

export const hasLogFilter = (query: ListLogsQuery) =>
  query.method !== undefined || query.path !== undefined || query.api_key_id !== undefined;

/** The filter expression of a query's conditions (status class as a range of statuses). */
function filterOf(query: ListLogsQuery) {
  const A = LOG_ATTRIBUTES;
  const terms: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (query.status !== undefined) {
    const low = Number(query.status[0]) * 100;
    terms.push('#s BETWEEN :slow AND :shigh');
    Object.assign(names, { '#s': A.status });
    Object.assign(values, { ':slow': low, ':shigh': low + 99 });
  }
  if (query.method !== undefined) {
    terms.push('#m = :m');
    Object.assign(names, { '#m': A.method });
    values[':m'] = query.method;
  }
  if (query.path !== undefined) {
    terms.push('begins_with(#e, :e)');
    Object.assign(names, { '#e': A.endpoint });
    values[':e'] = query.path;
  }
  if (query.api_key_id !== undefined) {
    terms.push('#k = :k');
    Object.assign(names, { '#k': A.apiKeyId });
    values[':k'] = query.api_key_id;
  }
  return { expression: terms.join(' AND '), names, values };
}

/**
 * One partition, read from the cursor outwards with the filter, at most `budget` logs evaluated;
 * `onCut` is told the sort key it stopped at when the budget ran out before the partition did.
 */
function boundedSource(
  db: DynamoDBDocumentClient,
  input: ConstructorParameters<typeof QueryCommand>[0],
  budget: number,
  onCut: (sortKey: string) => void,
): SortedSource<Item> {
  let startKey: Item | undefined;
  let done = false;
  let left = budget;
  // Matches are few among many: each Query evaluates more than the merge asks for, growing.
  let size = 32;
  return {
    async read(count: number) {
      if (done) return { entries: [], done };
      const limit = Math.min(left, Math.max(count, size));
      size *= 2;
      const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey, Limit: limit }));
      left -= page.ScannedCount ?? limit;
      startKey = page.LastEvaluatedKey;
      done = startKey === undefined;
      if (!done && left <= 0) {
        done = true;
        onCut(String(startKey?.sk));
      }
      return { entries: page.Items ?? [], done };
    },
  };
}

/** A filtered page of logs, newest first, its reads bounded by LOG_FILTER_READ_BOUND. */
export async function filteredLogPage(
  db: DynamoDBDocumentClient,
  tableName: string,
  query: ListLogsQuery,
  bound = LOG_FILTER_READ_BOUND,
): Promise<LogPage> {
  const prefix = keys.logListedPrefix;
  const filter = filterOf(query);
  const cursor = query.after ?? query.before;
  const older = query.before === undefined;
  const at = cursor === undefined ? undefined : keys.logListed(cursor);
  const [low, high] =
    at === undefined ? [prefix, `${prefix}\uffff`] : older ? [prefix, at] : [at, `${prefix}\uffff`];
  const cuts: string[] = [];
  const share = Math.max(1, Math.floor(bound / LOG_SHARDS));
  const sources = Array.from({ length: LOG_SHARDS }, (_, shard) =>
    boundedSource(
      db,
      {
        TableName: tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :low AND :high',
        FilterExpression: filter.expression,
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', ...filter.names },
        ExpressionAttributeValues: { ':pk': keys.logs(shard), ':low': low, ':high': high, ...filter.values },
        ScanIndexForward: !older,
      },
      share,
      (sortKey) => cuts.push(sortKey),
    ),
  );
  // An offset counts only without a cursor; one more than the page, to know whether there is more.
  const skip = cursor === undefined ? query.offset : 0;
  const wanted = skip + query.limit + 1 + (at === undefined ? 0 : 1);
  const { entries } = await mergeSorted(
    sources,
    (item) => String(item.sk),
    wanted,
    older ? 'descending' : 'ascending',
  );
  // Where every partition was read to: the first place a partition stopped, in the page's direction.
  const frontier = cuts.length === 0 ? undefined : cuts.reduce((a, b) => ((older ? a > b : a < b) ? a : b));
  const read = entries.filter(
    (item) =>
      item.sk !== at &&
      (frontier === undefined || (older ? String(item.sk) >= frontier : String(item.sk) <= frontier)),
  );
  const items = read.slice(skip);
  const taken = items.slice(0, query.limit).map(summaryOf);
  const full = items.length > query.limit;
  return {
    data: older ? taken : taken.reverse(),
    has_more: full || frontier !== undefined,
    ...(frontier !== undefined && !full ? { scanned_to: frontier.slice(prefix.length) } : {}),
  };
}
