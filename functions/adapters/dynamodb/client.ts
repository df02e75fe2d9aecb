import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type DeleteCommand,
  DynamoDBDocumentClient,
  type PutCommand,
  QueryCommand,
  type QueryCommandInput,
  type UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { PageQuery } from '../../shared/list.js';
import { mergeSorted, type SortedSource } from '../../shared/sorted-merge.js';
import { newDynamoDbClient } from '../aws-clients.js';

/** One client per container, reused by every invocation. Endpoint from AWS_ENDPOINT_URL_DYNAMODB when set (local). */
export const createDocumentClient = (client: DynamoDBClient = newDynamoDbClient()) =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** A conditional write whose condition did not hold (the expected outcome of a guarded write, not a fault). */
export const isConditionFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * Sends a conditional write: true when DynamoDB applied it, false when its condition did not hold
 * (the expected outcome of a guarded write); any other failure throws.
 */
export async function writeIf(
  db: DynamoDBDocumentClient,
  command: PutCommand | UpdateCommand | DeleteCommand,
): Promise<boolean> {
  return (await attributesIf(db, command)) !== null;
}

/**
 * The same, answering the attributes the write returns (its ReturnValues; {} when it asks for
 * none), or null when the condition did not hold.
 */
export async function attributesIf(
  db: DynamoDBDocumentClient,
  command: PutCommand | UpdateCommand | DeleteCommand,
): Promise<Item | null> {
  try {
    const { Attributes } = await db.send(command as UpdateCommand);
    return Attributes ?? {};
  } catch (error) {
    if (isConditionFailure(error)) return null;
    throw error;
  }
}

/** DynamoDB refusing a request for the load on the item's partition or the table (not a fault of the request). */
export const isThrottling = (error: unknown) =>
  error instanceof Error &&
  ['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded'].includes(
    error.name,
  );

type Item = Record<string, unknown>;

/** Every page of a Query, one after the other. */
export async function* queryPages(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): AsyncGenerator<Item[]> {
  let startKey: Item | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    yield page.Items ?? [];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Where a sorted partition's items are: its key names and values, and the prefix its sort keys share. */
export interface SortedPartition {
  TableName: string;
  IndexName?: string;
  ConsistentRead?: boolean;
  partitionKey: string;
  sortKey: string;
  partition: string;
  /** What every listed item's sort key starts with, its id included (`DOMAIN#dom_`, or `em_` for an index keyed by id). */
  prefix: string;
  /** The sort key of the item with this id. */
  sortKeyOf: (id: string) => string;
  /** Sort keys outside these bounds (inclusive) are not listed: a time range, for an index keyed by time-sorted ids. */
  range?: { low?: string; high?: string };
  /** Items read but left out (a FilterExpression, with its names and values): what the page keeps. */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
}

/** Several partitions sorted alike (the shards of an index), listed as one. */
export type SortedPartitions = Omit<SortedPartition, 'partition'> & { partitions: string[] };

/**
 * A page of a partition whose sort keys end in time-sorted ids, newest first: at an offset (which
 * reads the skipped items), or next to a cursor item, which reads only the page (one item more, to
 * know whether there is more, and the cursor item itself if it still exists).
 */
export async function newestFirstPage(
  db: DynamoDBDocumentClient,
  where: SortedPartition,
  page: PageQuery,
): Promise<{ items: Item[]; has_more: boolean }> {
  const { partition, ...rest } = where;
  const { items, has_more } = await newestFirstMerged(db, { ...rest, partitions: [partition] }, page);
  return { items, has_more };
}

/**
 * The same page over several partitions merged, as if they were one: each is read from its newest
 * (or from the cursor outwards) in chunks, only as far as the page needs (shared/sorted-merge.ts:
 * at most readBound(offset + limit + 2, partitions) index entries). `read`: how many were read.
 */
export async function newestFirstMerged(
  db: DynamoDBDocumentClient,
  where: SortedPartitions,
  page: PageQuery,
): Promise<{ items: Item[]; has_more: boolean; read: number }> {
  const { partitionKey, sortKey, partitions, prefix, sortKeyOf, filter, range, ...target } = where;
  const names = { '#pk': partitionKey, '#sk': sortKey, ...filter?.names };
  const cursor = page.after ?? page.before;
  const older = page.before === undefined;
  // BETWEEN is inclusive: the cursor item is read (if it exists) and dropped.
  const at = cursor === undefined ? undefined : sortKeyOf(cursor);
  const [cursorLow, cursorHigh] =
    at === undefined ? [prefix, `${prefix}\uffff`] : older ? [prefix, at] : [at, `${prefix}\uffff`];
  const low = range?.low !== undefined && range.low > cursorLow ? range.low : cursorLow;
  const high = range?.high !== undefined && range.high < cursorHigh ? range.high : cursorHigh;
  // An empty range (DynamoDB refuses a BETWEEN whose bounds are reversed).
  if (low > high) return { items: [], has_more: false, read: 0 };
  const sources = partitions.map((partition) =>
    querySource(db, {
      ...target,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :low AND :high',
      ...(filter ? { FilterExpression: filter.expression } : {}),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': partition, ':low': low, ':high': high, ...filter?.values },
      // From the cursor outwards: older items newest first, newer items oldest first.
      ScanIndexForward: !older,
    }),
  );
  const skip = cursor === undefined ? page.offset : 0;
  // One more than the page, to know whether there is more; and the cursor item, if it is read.
  const wanted = skip + page.limit + 1 + (at === undefined ? 0 : 1);
  const { entries, read } = await mergeSorted(
    sources,
    (item) => String(item[sortKey]),
    wanted,
    older ? 'descending' : 'ascending',
  );
  const items = entries.filter((item) => item[sortKey] !== at).slice(skip);
  const taken = items.slice(0, page.limit);
  return { items: older ? taken : taken.reverse(), has_more: items.length > page.limit, read };
}

/** A Query read in chunks, as a source for mergeSorted. */
export function querySource(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>,
): SortedSource<Item> {
  let startKey: Item | undefined;
  let done = false;
  return {
    async read(count: number) {
      if (done) return { entries: [], done };
      const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey, Limit: count }));
      startKey = page.LastEvaluatedKey;
      done = startKey === undefined;
      return { entries: page.Items ?? [], done };
    },
  };
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * These items, however many: BatchGetItem takes 100 keys a call, so larger lists go as calls of
 * 100 side by side; each retries what DynamoDB leaves unprocessed (with backoff).
 */
export async function batchGetAll(
  db: DynamoDBDocumentClient,
  tableName: string,
  keyList: Item[],
  projection?: string,
  consistent?: boolean,
  /** The projection's `#names` (a reserved word such as `name` must be one). */
  attributeNames?: Record<string, string>,
): Promise<Item[]> {
  const calls: Item[][] = [];
  for (let i = 0; i < keyList.length; i += 100) calls.push(keyList.slice(i, i + 100));
  const found = await Promise.all(
    calls.map((keys) => batchGet(db, tableName, keys, projection, consistent, attributeNames)),
  );
  return found.flat();
}

/** One BatchGetItem of up to 100 keys, and its retries. */
async function batchGet(
  db: DynamoDBDocumentClient,
  tableName: string,
  keyList: Item[],
  projection?: string,
  consistent?: boolean,
  attributeNames?: Record<string, string>,
): Promise<Item[]> {
  const found: Item[] = [];
  let pending = keyList;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 0) {
      if (attempt > 5) throw new Error('DynamoDB did not answer the read after 5 retries');
      await pause(25 * 2 ** attempt);
    }
    const result = await db.send(
      new BatchGetCommand({
        RequestItems: {
          [tableName]: {
            Keys: pending,
            ProjectionExpression: projection,
            ConsistentRead: consistent,
            ...(attributeNames ? { ExpressionAttributeNames: attributeNames } : {}),
          },
        },
      }),
    );
    found.push(...(result.Responses?.[tableName] ?? []));
    pending = (result.UnprocessedKeys?.[tableName]?.Keys ?? []) as Item[];
  }
  return found;
}
