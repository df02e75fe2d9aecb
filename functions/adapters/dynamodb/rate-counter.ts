import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateCounter } from '../../core/ports.js';
import { keys } from './table.js';

/**
 * One counter item per subject and window: `ADD count 1` returns the new count in the same call,
 * so limiting costs one small write (1 write unit) and no read. TTL removes old windows.
 */
export class DynamoRateCounter implements RateCounter {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async hit(subject: string, window: number, expiresAtSeconds: number): Promise<number> {
    const { Attributes } = await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.rate(subject, window), sk: keys.rateSk },
        UpdateExpression: 'ADD #count :one SET expires_at = :expires',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':one': 1, ':expires': expiresAtSeconds },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.count ?? 1);
  }
}
