import { CreateTableCommand, type DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { INDEX_PROJECTION, INDEXES, TABLE_KEYS } from '../adapters/dynamodb/table.js';

/** Creates the table as the CDK stack defines it (same keys and indexes); no-op when it exists. */
export async function ensureTable(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
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
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...INDEX_PROJECTION] },
        })),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
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
