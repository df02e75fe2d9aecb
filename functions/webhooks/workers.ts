import type { WorkerSpec } from '../shared/function-spec.js';

/** The webhooks' background functions: delivery, and the parked retries (shared/function-spec.ts). */

export const WEBHOOK_WORKERS = {
  // The endpoint, read before each attempt (GetItem); the message and its attempt (BatchWriteItem,
  // PutItem for a dropped one); the endpoint's failing mark (UpdateItem). A failed attempt hides
  // its message until the next one is due (ChangeMessageVisibility; receiving and deleting are the
  // event source's), or, due in more than 15 minutes, parks it in the table (PutItem).
  'deliver-webhooks': {
    description: 'POSTs signed webhook messages to their endpoints, retrying on the schedule',
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'],
    table: { actions: ['GetItem', 'PutItem', 'BatchWriteItem', 'UpdateItem'] },
    webhookQueue: ['ChangeMessageVisibility'],
  },
  // The parked retries that fell due (Query on their partitions), put on the delivery queue
  // (SendMessage), then taken out (BatchWriteItem). Likewise the events kept because they could not
  // be published when raised (webhooks/republish.ts): the endpoints and the kept events read (Query),
  // their messages put on the queue (SendMessage), the events taken out (BatchWriteItem). The
  // functions that raise events keep them with an action their roles have already: UpdateItem (the
  // background functions), PutItem (the domain routes).
  'requeue-webhook-retries': {
    description: 'Puts parked webhook retries back on the delivery queue as they fall due',
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    table: { actions: ['Query', 'BatchWriteItem'] },
    webhookQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;
