import { EMAIL_WORKERS } from '../emails/workers.js';
import type { WorkerSpec } from '../shared/function-spec.js';

/** The send consumer's access (its deliver code is the lane's), but for the queue it puts emails back on. */
const { sendQueue: _sendQueue, env: sendEnv, ...sendConsumer } = EMAIL_WORKERS['process-send-queue'];

/** The broadcasts background functions (issue 41; shared/function-spec.ts). */
export const BROADCAST_WORKERS = {
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
    // Not the send consumer's PutItem: that is the event of a topic email's second recipient SES
    // never took (deliver-unsent.ts), and a broadcast email has one recipient.
    table: { actions: ['BatchGetItem', 'GetItem', 'UpdateItem', 'Query'] },
  },
} as const satisfies Record<string, WorkerSpec>;
