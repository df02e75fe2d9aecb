import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { newDynamoDbClient } from '../aws-clients.js';

/** One client per container, reused by every invocation. Endpoint from AWS_ENDPOINT_URL_DYNAMODB when set (local). */
export const createDocumentClient = (client: DynamoDBClient = newDynamoDbClient()) =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** A conditional write whose condition did not hold (the expected outcome of a guarded write, not a fault). */
export const isConditionFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

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

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** BatchGetItem of up to 100 keys, retrying what DynamoDB leaves unprocessed (with backoff). */
export async function batchGetAll(
  db: DynamoDBDocumentClient,
  tableName: string,
  keyList: Item[],
  projection?: string,
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
        RequestItems: { [tableName]: { Keys: pending, ProjectionExpression: projection } },
      }),
    );
    found.push(...(result.Responses?.[tableName] ?? []));
    pending = (result.UnprocessedKeys?.[tableName]?.Keys ?? []) as Item[];
  }
  return found;
}
