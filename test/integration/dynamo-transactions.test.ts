import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestTable, type TestTable } from '../support/table.js';

/** local/dynamo-transactions.ts: dynalite given DynamoDB's TransactWriteItems, all or nothing. */
describe('TransactWriteItems on the local DynamoDB', () => {
  let t: TestTable;
  beforeAll(async () => {
    t = await startTestTable();
  });
  afterAll(() => t.stop());

  const get = async (pk: string) =>
    (await t.db.send(new GetCommand({ TableName: t.tableName, Key: { pk, sk: 'X' } }))).Item;

  it('writes every item when every condition holds', async () => {
    await t.db.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'A', sk: 'X', n: 1 } }));
    await t.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: t.tableName,
              Item: { pk: 'B', sk: 'X' },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Update: {
              TableName: t.tableName,
              Key: { pk: 'A', sk: 'X' },
              UpdateExpression: 'SET n = :two',
              ConditionExpression: 'n = :one',
              ExpressionAttributeValues: { ':one': 1, ':two': 2 },
            },
          },
        ],
      }),
    );
    expect(await get('B')).toEqual({ pk: 'B', sk: 'X' });
    expect((await get('A'))?.n).toBe(2);
  });

  it('writes nothing when one condition fails, and names it in the cancellation reasons', async () => {
    const failed = await t.db
      .send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: t.tableName, Item: { pk: 'C', sk: 'X' } } },
            {
              Update: {
                TableName: t.tableName,
                Key: { pk: 'A', sk: 'X' },
                UpdateExpression: 'SET n = :three',
                ConditionExpression: 'n = :one',
                ExpressionAttributeValues: { ':one': 1, ':three': 3 },
              },
            },
          ],
        }),
      )
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TransactionCanceledException);
    expect((failed as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'None',
      'ConditionalCheckFailed',
    ]);
    expect(await get('C')).toBeUndefined();
    expect((await get('A'))?.n).toBe(2);
  });

  it('refuses two operations on one item, as DynamoDB does', async () => {
    const failed = await t.db
      .send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: t.tableName, Item: { pk: 'D', sk: 'X' } } },
            { Delete: { TableName: t.tableName, Key: { pk: 'D', sk: 'X' } } },
          ],
        }),
      )
      .catch((error: unknown) => error as Error);
    expect((failed as Error).message).toMatch(/multiple operations on one item/);
    expect(await get('D')).toBeUndefined();
  });
});
