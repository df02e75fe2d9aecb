import { DynamoBroadcastStore } from '../adapters/dynamodb/broadcast-store.js';
import { audienceReads, broadcastTotals, type Table } from '../adapters/dynamodb/repositories.js';
import { onFirstUse } from '../adapters/on-first-use.js';
import type { BroadcastFanOutQueue } from '../broadcasts/ports.js';
import { loadConfig } from '../shared/config.js';
import type { Clock } from '../shared/ports.js';
import { apiDeps } from '../wiring.js';

/**
 * The wiring of the broadcasts routes (broadcasts/routes.ts): the broadcasts' store, the audience's
 * reads (a segment, a topic, the properties merge tags may name, a contact to preview), the sender
 * domains' check and the fan-out queue a send starts on (BROADCAST_FANOUT_QUEUE_URL).
 */
const broadcastStore = (t: Table) => new DynamoBroadcastStore(t.db, t.name);

type PlainFunction = 'list-broadcasts' | 'delete-broadcast' | 'cancel-broadcast' | 'duplicate-broadcast';

/** The routes that read or change only the broadcast itself. */
export const broadcastDeps = (name: PlainFunction) => apiDeps(name, { broadcasts: broadcastStore });

/** get-broadcast: the broadcast and its totals (the tally's counters, adapters/dynamodb/broadcast-tally.ts). */
export const getBroadcastDeps = () =>
  apiDeps('get-broadcast', { broadcasts: broadcastStore, totals: broadcastTotals });

/** update-broadcast: the broadcast, and the segment and topic it names. */
export const updateBroadcastDeps = () =>
  apiDeps('update-broadcast', { broadcasts: broadcastStore, audience: audienceReads });

/** The fan-out queue, its SQS code loaded on the first send (an island): most creates are drafts. */
function fanOutOnFirstUse(queueUrl: string): BroadcastFanOutQueue {
  const queue = onFirstUse(async () =>
    (await import('../adapters/sqs/broadcast-fanout-island.js')).createBroadcastFanOutQueue(queueUrl),
  );
  return { next: async (...step) => (await queue()).next(...step) };
}

/**
 * What create-broadcast and send-broadcast share: the broadcast, the segment, topic and properties
 * it names, and where the fan-out queue is. The sender domain's check and the queue are each their
 * own: send-broadcast uses both on every request, so builds them at init (wiring/broadcast-send.ts,
 * lib/budgets.ts); create-broadcast only with `send: true`, so loads them on first use.
 */
export function broadcastSendBase(name: 'create-broadcast' | 'send-broadcast') {
  const deps = apiDeps(name, { broadcasts: broadcastStore, audience: audienceReads });
  const { BROADCAST_FANOUT_QUEUE_URL } = loadConfig('BROADCAST_FANOUT_QUEUE_URL');
  return { ...deps, fanOutQueueUrl: BROADCAST_FANOUT_QUEUE_URL };
}

/** The sender domain's check (as a send's: domains/sending.ts), its code loaded on the first send (an island). */
function senderCheckOnFirstUse(t: Table, clock: Clock): (domain: string) => Promise<void> {
  const check = onFirstUse(async () =>
    (await import('../adapters/dynamodb/sender-check-island.js')).createSenderCheck(t.db, t.name, clock),
  );
  return async (domain) => (await check())(domain);
}

/** create-broadcast: the above, the sender's check and the fan-out queue loaded on the first send. */
export function createBroadcastDeps() {
  const deps = broadcastSendBase('create-broadcast');
  return {
    ...deps,
    assertSenderDomain: senderCheckOnFirstUse(deps.table, deps.clock),
    fanOut: fanOutOnFirstUse(deps.fanOutQueueUrl),
  };
}

/** preview-broadcast: the broadcast, the contact and properties, and the link a preview shows. */
export function previewBroadcastDeps() {
  const deps = apiDeps('preview-broadcast', { broadcasts: broadcastStore, audience: audienceReads });
  const { PUBLIC_ORIGIN } = loadConfig('PUBLIC_ORIGIN');
  return { ...deps, previewUnsubscribeUrl: `${PUBLIC_ORIGIN}/unsubscribe/preview` };
}
