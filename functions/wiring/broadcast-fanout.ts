import { newSqsClient } from '../adapters/aws-clients.js';
import { contactListing } from '../adapters/dynamodb/contact-listing.js';
import { fanOutStore } from '../adapters/dynamodb/fan-out-store.js';
import {
  audienceReads,
  broadcastTotals,
  emailRepository,
  openTable,
  sendQuotaStore,
  sweepStore,
} from '../adapters/dynamodb/repositories.js';
import { SqsBroadcastFanOutQueue } from '../adapters/sqs/broadcast-fanout-queue.js';
import { SqsBroadcastLane } from '../adapters/sqs/broadcast-lane.js';
import type { FanOutDeps } from '../broadcasts/fan-out-ports.js';
import { log } from '../observability/logger.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/ports.js';
import { unsubscribeLinks } from './unsubscribe-links.js';

/**
 * The `fan-out-broadcast` worker: the broadcast item's fan-out attributes, the segment's members,
 * the emails it makes, the lane they wait in, its own queue, the account's SES limits as the send
 * consumers keep them, the broadcast's totals and each contact's unsubscribe link.
 */
export function fanOutDeps(): FanOutDeps {
  const config = loadConfig('TABLE_NAME', 'BROADCAST_FANOUT_QUEUE_URL', 'BROADCAST_SEND_QUEUE_URL');
  const table = openTable(config.TABLE_NAME);
  const sqs = newSqsClient();
  return {
    store: fanOutStore(table),
    members: contactListing(table),
    audience: audienceReads(table),
    emails: emailRepository(table),
    sweep: sweepStore(table),
    lane: new SqsBroadcastLane(sqs, config.BROADCAST_SEND_QUEUE_URL),
    queue: new SqsBroadcastFanOutQueue(sqs, config.BROADCAST_FANOUT_QUEUE_URL),
    quota: sendQuotaStore(table),
    // What the lane has handled: the tally's counters (adapters/dynamodb/broadcast-tally.ts).
    totals: broadcastTotals(table),
    unsubscribeLinks: unsubscribeLinks(),
    clock: systemClock,
    log,
  };
}
