import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
beforeAll(async () => {
  table = await startTestTable();
});
afterAll(() => table.stop());

describe('the local DynamoDB refuses what DynamoDB refuses (local/dynamo-parity.ts)', () => {
  it('an empty string in a key condition: ValidationException, as on AWS, not an empty answer', async () => {
    const query = (sk: string) =>
      table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: 'emails-by-due',
          KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': 'DUE#00', ':from': sk, ':to': '2030~' },
        }),
      );
    await expect(query('')).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/cannot contain an empty string value/),
    });
    await expect(query('0')).resolves.toMatchObject({ Items: [] });
  });
});
