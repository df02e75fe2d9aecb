import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ReceiptRuleSetState, ReceiptRuleSetStates } from '../../domains/ports.js';

/**
 * The receipt-rule writer's view of the account's active rule set: the table's `RECEIVING`/`RULES`
 * item, written by `sync-receipt-rules` each time it looks (docs: issue 38's design), read here by
 * the domain functions to say on a receiving domain's `Receiving` record when mail cannot arrive.
 */
export const RULE_SET_STATE_KEY = { pk: 'RECEIVING', sk: 'RULES' } as const;

export class DynamoReceiptRuleSetStates implements ReceiptRuleSetStates {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(): Promise<ReceiptRuleSetState | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: RULE_SET_STATE_KEY, ConsistentRead: true }),
    );
    if (!Item || typeof Item.ours !== 'boolean') return null;
    return {
      active_set: typeof Item.active_set === 'string' ? Item.active_set : null,
      ours: Item.ours,
      checked_at: String(Item.checked_at ?? ''),
      rule_set: String(Item.rule_set ?? ''),
    };
  }
}
