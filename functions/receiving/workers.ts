import { PUBLISHES, type WorkerSpec } from '../shared/function-spec.js';

/**
 * Receiving's background functions (shared/function-spec.ts): receive-email, which SES's receipt
 * rule invokes (its Lambda action, asynchronously) for each message it wrote to the content bucket,
 * and sweep-received, which hands it what it missed.
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
} as const satisfies Record<string, WorkerSpec>;
