import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import type { TestTable } from './table.js';

/**
 * A repository whose client fails every UpdateItem that `matches` while `failing.on` (before it
 * reaches the table, as DynamoDB throttling the item's partition would), each counted in
 * `failing.refused`. The SDK's own retries meet the same refusal.
 */
export function failingWrites(table: TestTable, matches: (updateExpression: string) => boolean) {
  const client = new DynamoDBClient({
    endpoint: table.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const failing = { on: true, refused: 0 };
  client.middlewareStack.add(
    ((next: (args: { input: { UpdateExpression?: string } }) => Promise<unknown>) =>
      async (args: { input: { UpdateExpression?: string } }) => {
        if (failing.on && matches(args.input.UpdateExpression ?? '')) {
          failing.refused++;
          throw Object.assign(new Error('Throughput exceeds the current capacity of your table or index.'), {
            name: 'ThrottlingException',
            $metadata: {},
          });
        }
        return next(args);
      }) as never,
    { step: 'initialize', name: 'failMatchingWrites' },
  );
  return {
    repo: new DynamoEmailRepository(createDocumentClient(client), table.tableName),
    failing,
    stop: () => client.destroy(),
  };
}

/** The write that releases a claim (its worker's, or the message's that carries it). */
export const isRelease = (updateExpression: string) =>
  updateExpression.includes('REMOVE send_started_at, claim');
