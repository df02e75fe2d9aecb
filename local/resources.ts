import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { INDEXES, projectionOf, TABLE_KEYS } from '../functions/adapters/dynamodb/table.js';

/** The local service's table (the stack's is named by CloudFormation). */
export const TABLE_NAME = 'email-service';

/**
 * Creates the table as the CDK stack defines it (same keys and indexes); when it exists without an
 * index added since (the due index, say), moves its items into a table that has them: dynalite
 * cannot add an index to a table. The items are first written to `backupFile` (when given), so a
 * start killed midway finishes the move at the next start.
 */
export async function ensureTable(
  dynamodb: DynamoDBClient,
  tableName: string,
  backupFile?: string,
): Promise<void> {
  if (backupFile && existsSync(backupFile)) {
    // A move the last start began: the table may be empty, partly written, or even missing.
    await createTable(dynamodb, tableName);
    await putAll(dynamodb, tableName, readBackup(backupFile));
    rmSync(backupFile);
  }
  if (!(await createTable(dynamodb, tableName))) return;
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  if (Object.values(INDEXES).every((index) => present.has(index.name))) return;
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  if (backupFile) {
    writeFileSync(
      `${backupFile}.tmp`,
      JSON.stringify(items, (_, v) =>
        v instanceof Uint8Array ? { $b64: Buffer.from(v).toString('base64') } : v,
      ),
    );
    renameSync(`${backupFile}.tmp`, backupFile);
  }
  await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
  await gone(dynamodb, tableName);
  await createTable(dynamodb, tableName);
  await putAll(dynamodb, tableName, items);
  if (backupFile) rmSync(backupFile);
}

/** Waits until a deleted table is gone (dynalite takes a moment, as DynamoDB does). */
async function gone(dynamodb: DynamoDBClient, tableName: string) {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the table ${tableName} was not deleted within 10 seconds`);
}

function readBackup(file: string): Record<string, AttributeValue>[] {
  return JSON.parse(readFileSync(file, 'utf8'), (_, v) =>
    v && typeof v === 'object' && typeof v.$b64 === 'string'
      ? new Uint8Array(Buffer.from(v.$b64, 'base64'))
      : v,
  );
}

async function putAll(dynamodb: DynamoDBClient, tableName: string, items: Record<string, AttributeValue>[]) {
  for (let i = 0; i < items.length; i += 25) {
    let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length) {
      const result = await dynamodb.send(
        new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }),
      );
      requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
    }
  }
}

/** Creates the table with every index; false when it exists already. */
async function createTable(dynamodb: DynamoDBClient, tableName: string): Promise<boolean> {
  const indexes = Object.values(INDEXES);
  const attributes = [
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    ...indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributes.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: projectionOf(index.name),
        })),
      }),
    );
    await active(dynamodb, tableName);
    return false;
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    await active(dynamodb, tableName);
    return true;
  }
}

/**
 * Waits until the table is ACTIVE: a new table is CREATING for a moment (on AWS for seconds), and
 * both DynamoDB and dynalite answer ResourceNotFoundException to item requests until then.
 */
async function active(dynamodb: DynamoDBClient, tableName: string) {
  for (let attempt = 0; attempt < 400; attempt++) {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the table ${tableName} did not become ACTIVE within 10 seconds`);
}

export interface LocalQueue {
  url: string;
  arn: string;
}

/** A queue with its dead-letter queue, redriving after `maxReceiveCount` receives, as on AWS. */
export async function ensureQueueWithDlq(
  sqs: SQSClient,
  name: string,
  options: { maxReceiveCount: number; visibilityTimeoutSeconds: number },
): Promise<{ queue: LocalQueue; dlq: LocalQueue }> {
  const dlq = await ensureQueue(sqs, `${name}-dlq`, {});
  const queue = await ensureQueue(sqs, name, {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds),
    MaximumMessageSize: String(1024 * 1024),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: options.maxReceiveCount }),
  });
  return { queue, dlq };
}

async function ensureQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<LocalQueue> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`no url for queue ${name}`);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl, arn: Attributes?.QueueArn ?? `arn:aws:sqs:us-east-1:000000000000:${name}` };
}

/** The messages a queue holds, visible or in flight. */
export async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}
