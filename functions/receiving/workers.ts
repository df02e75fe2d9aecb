import { PUBLISHES, type WorkerSpec } from '../shared/function-spec.js';

/**
 * Receiving's background functions (shared/function-spec.ts): receive-email, which SES's receipt
 * rule invokes (its Lambda action, asynchronously) for each message it wrote to the content bucket,
 * and sweep-received, which hands it what it missed; sync-receipt-rules, the one writer of our
 * receipt rules, and set-up-receiving, the stack's custom resource that sets them up.
 */

/** What storing a received message takes: its objects, its items, its count and its event. */
const STORES_RECEIVED = {
  // The received email and its claim (PutItem; GetItem to find them), its notified mark, the
  // metrics' counter and an event kept for a late publish (UpdateItem); the webhook endpoints (Query).
  table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'Query'] },
  // The raw message SES wrote (GetObject under received/raw/), its parsed bodies and attachments
  // (PutObject, in parts above 8 MiB: AbortMultipartUpload when a part fails).
  content: { 'received/': ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'] },
  ...PUBLISHES,
} as const satisfies Omit<WorkerSpec, 'description' | 'env'>;

export const RECEIVING_WORKERS = {
  'receive-email': {
    description:
      'Parses a message SES received and wrote to the content bucket, stores it once and publishes email.received',
    env: ['TABLE_NAME', 'CONTENT_BUCKET', 'WEBHOOK_QUEUE_URL', 'RECEIVED_RETENTION_DAYS'],
    ...STORES_RECEIVED,
  },
  'sweep-received': {
    description:
      "Receives the messages receive-email missed: its failure destination's records, and raw messages older than 15 minutes with no received email",
    env: [
      'TABLE_NAME',
      'CONTENT_BUCKET',
      'WEBHOOK_QUEUE_URL',
      'RECEIVED_RETENTION_DAYS',
      'RECEIVED_FAILURES_QUEUE_URL',
    ],
    ...STORES_RECEIVED,
    // Lists `received/raw/` (and nothing else of the bucket).
    listsReceivedRaw: true,
    // Takes the failure records (hidden while it handles them) and deletes each once handled.
    receivedFailures: ['ReceiveMessage', 'DeleteMessage'],
  },
  'sync-receipt-rules': {
    description: 'Brings the SES receipt rules to the domains with receiving enabled',
    // CONTENT_BUCKET and RECEIVE_FUNCTION_ARN: the rules' S3 and Lambda actions (it calls neither).
    env: ['TABLE_NAME', 'RECEIPT_RULE_SET', 'RECEIPT_RULE_PREFIX', 'RECEIVE_FUNCTION_ARN', 'CONTENT_BUCKET'],
    // Set only locally: SES's one call a second is the default.
    optionalEnv: ['RECEIPT_RULE_CALL_INTERVAL_MS'],
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
    optionalEnv: ['RECEIPT_RULE_CALL_INTERVAL_MS'],
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
