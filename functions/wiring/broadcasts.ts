import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoBroadcastStore } from '../adapters/dynamodb/broadcast-store.js';
import { audienceReads, domainRepository, type Table } from '../adapters/dynamodb/repositories.js';
import { SqsBroadcastFanOutQueue } from '../adapters/sqs/broadcast-fanout-queue.js';
import { verifiedSenderDomains } from '../domains/sending.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps } from '../wiring.js';

/**
 * The wiring of the broadcasts routes (broadcasts/routes.ts): the broadcasts' store, the audience's
 * reads (a segment, a topic, the properties merge tags may name, a contact to preview), the sender
 * domains' check and the fan-out queue a send starts on (BROADCAST_FANOUT_QUEUE_URL).
 */
const broadcastStore = (t: Table) => new DynamoBroadcastStore(t.db, t.name);

type PlainFunction =
  | 'list-broadcasts'
  | 'get-broadcast'
  | 'delete-broadcast'
  | 'cancel-broadcast'
  | 'duplicate-broadcast';

/** The routes that read or change only the broadcast itself. */
export const broadcastDeps = (name: PlainFunction) => apiDeps(name, { broadcasts: broadcastStore });

/** update-broadcast: the broadcast, and the segment and topic it names. */
export const updateBroadcastDeps = () =>
  apiDeps('update-broadcast', { broadcasts: broadcastStore, audience: audienceReads });

/**
 * create-broadcast and send-broadcast: the above, the sender domain's check (as a send's, its
 * verified answer kept a minute) and the fan-out queue (SQS on every send, so at init).
 */
export function sendBroadcastDeps(name: 'create-broadcast' | 'send-broadcast') {
  const deps = apiDeps(name, {
    broadcasts: broadcastStore,
    audience: audienceReads,
    domains: domainRepository,
  });
  const { BROADCAST_FANOUT_QUEUE_URL } = loadConfig('BROADCAST_FANOUT_QUEUE_URL');
  return {
    ...deps,
    assertSenderDomain: verifiedSenderDomains(deps.domains, deps.clock),
    fanOut: new SqsBroadcastFanOutQueue(newSqsClient(), BROADCAST_FANOUT_QUEUE_URL),
  };
}

/** preview-broadcast: the broadcast, the contact and properties, and the link a preview shows. */
export function previewBroadcastDeps() {
  const deps = apiDeps('preview-broadcast', { broadcasts: broadcastStore, audience: audienceReads });
  const { PUBLIC_ORIGIN } = loadConfig('PUBLIC_ORIGIN');
  return { ...deps, previewUnsubscribeUrl: `${PUBLIC_ORIGIN}/unsubscribe/preview` };
}
