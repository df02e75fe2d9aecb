import type { WorkerSpec } from '../shared/function-spec.js';

/** Receiving's background functions (shared/function-spec.ts). */
export const RECEIVING_WORKERS = {
  'sync-receipt-rules': {
    description: 'Brings the SES receipt rules to the domains with receiving enabled',
    // CONTENT_BUCKET and RECEIVE_FUNCTION_ARN: the rules' S3 and Lambda actions (it calls neither).
    env: ['TABLE_NAME', 'RECEIPT_RULE_SET', 'RECEIPT_RULE_PREFIX', 'RECEIVE_FUNCTION_ARN', 'CONTENT_BUCKET'],
    // Query: the domains (one partition); PutItem: its view of the active set (RECEIVING / RULES).
    table: { actions: ['Query', 'PutItem'] },
    receiptRules: [
      'DescribeReceiptRuleSet',
      'CreateReceiptRule',
      'UpdateReceiptRule',
      'DeleteReceiptRule',
      'DescribeActiveReceiptRuleSet',
    ],
  },
  'set-up-receiving': {
    description: "Sets receiving up in SES's receipt rule sets (the stack's custom resource)",
    // Everything else it reads comes with the custom resource's event (ResourceProperties).
    env: [],
    table: { actions: [] },
    receiptRules: [
      'DescribeActiveReceiptRuleSet',
      'DescribeReceiptRuleSet',
      'CreateReceiptRuleSet',
      'SetActiveReceiptRuleSet',
      'DeleteReceiptRuleSet',
      'CreateReceiptRule',
      'UpdateReceiptRule',
      'DeleteReceiptRule',
    ],
    receiptRulesQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;
