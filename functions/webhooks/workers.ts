import type { WorkerSpec } from '../shared/function-spec.js';

/** The webhooks' background functions: delivery, and the parked retries (shared/function-spec.ts). */

export const WEBHOOK_WORKERS = {
  // The endpoint, read once a batch (GetItem); the message and its attempt (BatchWriteItem,
  // PutItem for a dropped one); the endpoint's failing mark and its breaker: failures, pause,
  // probe, recovery, its held mark (UpdateItem); a paused endpoint's messages held (BatchWriteItem).
  // A failed attempt's retry due within 15 minutes is a new delayed message (SendMessage), a later
  // one parked in the table (PutItem); receiving and deleting are the event source's.
  'deliver-webhooks': {
    description: 'POSTs signed webhook messages to their endpoints, retrying on the schedule',
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    optionalEnv: ['WEBHOOK_ALLOW_LOOPBACK'],
    table: { actions: ['GetItem', 'PutItem', 'BatchWriteItem', 'UpdateItem'] },
    webhookQueue: ['SendMessage'],
  },
  // The parked retries that fell due (Query on their partitions), put on the delivery queue
  // (SendMessage), then taken out (BatchWriteItem). Then the endpoints (Query) and the messages
  // their breakers held (Query): put back on the queue and taken out, or marked failed (PutItem);
  // the held mark cleared (UpdateItem). Likewise the events kept because they could not be
  // published when raised (webhooks/republish.ts): the kept events read (Query), their messages put
  // on the queue (SendMessage), the events taken out (BatchWriteItem). The functions that raise
  // events keep them with an action their roles have already: UpdateItem (the background
  // functions), PutItem (the domain routes).
  'requeue-webhook-retries': {
    description: 'Puts parked webhook retries and held messages back on the delivery queue as they fall due',
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    table: { actions: ['Query', 'BatchWriteItem', 'PutItem', 'UpdateItem'] },
    webhookQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;
