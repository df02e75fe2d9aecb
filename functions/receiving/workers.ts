import { PUBLISHES, type WorkerSpec } from '../shared/function-spec.js';

/**
 * Receiving's background functions (shared/function-spec.ts): the parser SES's receipt rule
 * invokes, the sweep that finds what it missed, the one writer of the receipt rules, and the
 * custom resource that sets the rules up. Deployed only in the Regions where SES receives
 * (domains/receiving-regions.ts); the stack builds them in lib/constructs/receiving.ts.
 */

/** What parsing and storing a received message reads and writes (receive.ts, through its ports). */
const RECEIVES = {
  env: ['TABLE_NAME', 'CONTENT_BUCKET', 'RECEIVED_RETENTION_DAYS', 'WEBHOOK_QUEUE_URL'],
  // The claim by SES message id (PutItem, conditional; GetItem of the winner), the email item
  // (PutItem) and its notified mark and the metrics' `received` count (UpdateItem); the webhook
  // endpoints (Query).
  table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'Query'] },
  // The raw message SES wrote (GetObject); its parsed bodies and each attachment (PutObject).
  content: { 'received/': ['s3:GetObject', 's3:PutObject'] },
  ...PUBLISHES,
} as const satisfies Omit<WorkerSpec, 'description'>;

export const RECEIVING_WORKERS = {
  'receive-email': {
    description: 'Parses and stores a message SES received, and publishes email.received',
    ...RECEIVES,
  },
  'sweep-received': {
    description:
      'Processes received messages whose invocation failed for good, and raw messages older than 15 minutes that became no received email',
    ...RECEIVES,
    env: [...RECEIVES.env, 'RECEIVED_FAILURES_QUEUE_URL'],
    // The failure destination's records, deleted once processed.
    receivedFailures: ['ReceiveMessage', 'DeleteMessage'],
    // Lists `received/raw/` (and nothing else of the bucket).
    listsReceivedRaw: true,
  },
  'sync-receipt-rules': {
    description: "Brings SES's receipt rules to the domains with receiving enabled, one call a second",
    env: ['TABLE_NAME', 'RECEIPT_RULE_SET', 'RECEIPT_RULE_PREFIX', 'RECEIVE_FUNCTION_ARN', 'CONTENT_BUCKET'],
    // The receiving domains (Query); what it saw of the active rule set (PutItem, RECEIVING/RULES).
    table: { actions: ['Query', 'PutItem'] },
    receiptRules: [
      'DescribeActiveReceiptRuleSet',
      'DescribeReceiptRuleSet',
      'CreateReceiptRule',
      'UpdateReceiptRule',
      'DeleteReceiptRule',
    ],
  },
  'set-up-receiving': {
    description:
      "The receipt rules' custom resource: creates our first rule (and our set, when none is active), and removes only what it added",
    env: ['RECEIPT_RULES_QUEUE_URL'],
    table: { actions: [] },
    receiptRules: [
      'DescribeActiveReceiptRuleSet',
      'DescribeReceiptRuleSet',
      'CreateReceiptRuleSet',
      'SetActiveReceiptRuleSet',
      'DeleteReceiptRuleSet',
      'CreateReceiptRule',
      'DeleteReceiptRule',
    ],
    // An update queues one sync, so the rules follow the domains after a deploy.
    receiptRuleQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;
