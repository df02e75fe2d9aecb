import { EMAIL_WORKERS } from '../emails/workers.js';
import type { WorkerSpec } from '../shared/function-spec.js';

/** The send consumer's access (its deliver code is the lane's), but for the queue it puts emails back on. */
// The lane carries broadcast emails only, never an SMTP email's MIME: no ses:SendRawEmail.
const {
  sendQueue: _sendQueue,
  sendsRawEmail: _sendsRawEmail,
  env: sendEnv,
  ...sendConsumer
} = EMAIL_WORKERS['process-send-queue'];

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
  // The broadcast lane's consumer: the send consumer's code and access (emails/workers.ts), plus the
  // broadcast item's status before each claim (GetItem, granted already), on the lane instead of the
  // send queue: what it defers goes back on the lane (SendMessage; receiving and deleting are the
  // event source's). Every broadcast email has an unsubscribe link: the keys are read on its first.
  'process-broadcast-queue': {
    ...sendConsumer,
    description:
      'Hands broadcast emails to SES from their lane, at most once each, behind transactional mail at the account’s SES pace',
    env: [...sendEnv.filter((key) => key !== 'SEND_QUEUE_URL'), 'BROADCAST_SEND_QUEUE_URL'],
    broadcastSendQueue: ['SendMessage'],
    // PutItem: the broadcast's tally, each recipient outcome put once (adapters/dynamodb/broadcast-tally.ts);
    // UpdateItem its counters too.
    table: { actions: ['BatchGetItem', 'GetItem', 'UpdateItem', 'Query', 'PutItem'] },
  },
} as const satisfies Record<string, WorkerSpec>;
