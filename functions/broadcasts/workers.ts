import type { WorkerSpec } from '../shared/function-spec.js';

/** The broadcasts background functions (issue 41; shared/function-spec.ts). */
export const BROADCAST_WORKERS = {
  // One step of a broadcast's fan-out (broadcasts/fan-out.ts): the broadcast item and the account's
  // SES limits as the send consumers keep them (GetItem); the segment's members through the time
  // index, the contact properties' partition, the broadcast's totals (Query); the memberships, the
  // contacts' id items and contacts, their topic choices, the states of a redone page's emails
  // (BatchGetItem); the emails made, their content in batch writes (BatchWriteItem) and each status
  // item conditionally, never over one that exists (PutItem); the checkpoint and status, and the
  // sweeper's start moved back to a page's emails (UpdateItem).
  'fan-out-broadcast': {
    description:
      "Fans a broadcast out to its segment's contacts, a page at a time, paced behind transactional mail",
    env: [
      'TABLE_NAME',
      'BROADCAST_FANOUT_QUEUE_URL',
      'BROADCAST_SEND_QUEUE_URL',
      // Each contact's own unsubscribe link ({{{RESEND_UNSUBSCRIBE_URL}}}), signed at run time.
      'UNSUBSCRIBE_KEYS_SECRET',
      'PUBLIC_ORIGIN',
    ],
    table: {
      actions: ['GetItem', 'Query', 'BatchGetItem', 'BatchWriteItem', 'PutItem', 'UpdateItem'],
      indexes: ['emailsByTime'],
    },
    unsubscribeKeys: 'read',
    // Its next step (SendMessage); receiving and deleting are the event source's.
    broadcastFanOutQueue: ['SendMessage'],
    // Each page's emails on the broadcast lane (SendMessageBatch is authorised as SendMessage).
    broadcastSendQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;
