import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ReceiptRuleView, ReceiptRuleViewStore } from '../../receiving/ports.js';

/**
 * The receipt-rule writer's view of the account's active rule set: one item, `RECEIVING` / `RULES`
 * (`active_set`, `ours`, `rule_set`, `checked_at`), put whole each time the writer looks. The
 * domain functions read it to say on a receiving domain's `Receiving` record when SES's active set
 * no longer holds our rules.
 */
export const RECEIPT_RULE_VIEW_KEY = { pk: 'RECEIVING', sk: 'RULES' } as const;

export class DynamoReceiptRuleViewStore implements ReceiptRuleViewStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async save(view: ReceiptRuleView): Promise<void> {
    await this.db.send(
      new PutCommand({ TableName: this.tableName, Item: { ...RECEIPT_RULE_VIEW_KEY, ...view } }),
    );
  }
}
