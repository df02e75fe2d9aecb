import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { RawSweepCursor, RawSweepState } from '../../receiving/sweep.js';

/**
 * Where sweep-received's listing of `received/raw/` stands between runs: one item, `RECEIVING` /
 * `SWEEP` (receiving/sweep.ts RawSweepState), put whole after each page it lists. One writer:
 * sweep-received (reserved concurrency aside, its runs are 5 minutes apart and end before the next).
 */
export const RAW_SWEEP_KEY = { pk: 'RECEIVING', sk: 'SWEEP' } as const;

export class DynamoRawSweepCursor implements RawSweepCursor {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(): Promise<RawSweepState | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: RAW_SWEEP_KEY, ConsistentRead: true }),
    );
    if (!Item) return null;
    return {
      ...(typeof Item.start_after === 'string' ? { start_after: Item.start_after } : {}),
      pass_started_ms: Number(Item.pass_started_ms),
      previous_pass_started_ms: Number(Item.previous_pass_started_ms),
      window_from_ms: Number(Item.window_from_ms),
    };
  }

  async save(state: RawSweepState): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...RAW_SWEEP_KEY, ...state } }));
  }
}
