import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import type { TestTable } from './table.js';

/**
 * A repository whose client loses the answer of the first UpdateItem that `matches`, after
 * DynamoDB applied it: the SDK retries (a timeout is transient), and the retry meets that write.
 */
export function losingFirstAnswer(table: TestTable, matches: (updateExpression: string) => boolean) {
  const client = new DynamoDBClient({
    endpoint: table.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const seen = { lost: 0, retried: 0 };
  client.middlewareStack.add(
    ((next: (args: { input: { UpdateExpression?: string } }) => Promise<unknown>) =>
      async (args: { input: { UpdateExpression?: string } }) => {
        const expression = args.input.UpdateExpression ?? '';
        if (matches(expression) && seen.lost > 0) seen.retried++;
        const result = await next(args);
        if (matches(expression) && seen.lost++ === 0)
          throw Object.assign(new Error('socket hang up after the write'), { name: 'TimeoutError' });
        return result;
      }) as never,
    { step: 'deserialize', name: 'loseFirstAnswer' },
  );
  return {
    repo: new DynamoEmailRepository(createDocumentClient(client), table.tableName),
    seen,
    stop: () => client.destroy(),
  };
}
