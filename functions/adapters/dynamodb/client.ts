import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { PageQuery } from '../../core/list.js';
import { newDynamoDbClient } from '../aws-clients.js';

/** One client per container, reused by every invocation. Endpoint from AWS_ENDPOINT_URL_DYNAMODB when set (local). */
export const createDocumentClient = (client: DynamoDBClient = newDynamoDbClient()) =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** A conditional write whose condition did not hold (the expected outcome of a guarded write, not a fault). */
export const isConditionFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

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

/** Offset pagination over a Query: reads one item past the page to know whether there is more. */
export async function pageOf(
  pages: AsyncIterable<Item[]>,
  { limit, offset }: { limit: number; offset: number },
) {
  const wanted = offset + limit + 1;
  const items: Item[] = [];
  for await (const page of pages) {
    items.push(...page);
    if (items.length >= wanted) break;
  }
  return { items: items.slice(offset, offset + limit), has_more: items.length > offset + limit };
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
}

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
  const { partitionKey, sortKey, partition, prefix, sortKeyOf, ...target } = where;
  const names = { '#pk': partitionKey, '#sk': sortKey };
  const cursor = page.after ?? page.before;
  if (cursor === undefined) {
    return pageOf(
      queryPages(db, {
        ...target,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':pk': partition, ':prefix': prefix },
        ScanIndexForward: false,
        Limit: Math.min(page.offset + page.limit + 1, 1000),
      }),
      page,
    );
  }
  // BETWEEN is inclusive: the cursor item is read (if it exists) and dropped.
  const at = sortKeyOf(cursor);
  const older = page.after !== undefined;
  const [low, high] = older ? [prefix, at] : [at, `${prefix}\uffff`];
  const items: Item[] = [];
  for await (const chunk of queryPages(db, {
    ...target,
    KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :low AND :high',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: { ':pk': partition, ':low': low, ':high': high },
    // From the cursor outwards: older items newest first, newer items oldest first.
    ScanIndexForward: !older,
    Limit: page.limit + 2,
  })) {
    items.push(...chunk.filter((item) => item[sortKey] !== at));
    if (items.length > page.limit) break;
  }
  const taken = items.slice(0, page.limit);
  return { items: older ? taken : taken.reverse(), has_more: items.length > page.limit };
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** BatchGetItem of up to 100 keys, retrying what DynamoDB leaves unprocessed (with backoff). */
export async function batchGetAll(
  db: DynamoDBDocumentClient,
  tableName: string,
  keyList: Item[],
  projection?: string,
  consistent?: boolean,
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
          [tableName]: { Keys: pending, ProjectionExpression: projection, ConsistentRead: consistent },
        },
      }),
    );
    found.push(...(result.Responses?.[tableName] ?? []));
    pending = (result.UnprocessedKeys?.[tableName]?.Keys ?? []) as Item[];
  }
  return found;
}
