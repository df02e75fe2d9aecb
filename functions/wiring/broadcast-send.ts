import { newSqsClient } from '../adapters/aws-clients.js';
import { domainRepository } from '../adapters/dynamodb/repositories.js';
import { SqsBroadcastFanOutQueue } from '../adapters/sqs/broadcast-fanout-queue.js';
import { verifiedSenderDomains } from '../domains/sending.js';
import { broadcastSendBase } from './broadcasts.js';

/**
 * send-broadcast: what a send reads (wiring/broadcasts.ts), the sender domain's check (its verified
 * answer kept a minute) and the fan-out queue, built at init: every send uses both.
 */
export function sendBroadcastDeps() {
  const deps = broadcastSendBase('send-broadcast');
  return {
    ...deps,
    assertSenderDomain: verifiedSenderDomains(domainRepository(deps.table), deps.clock),
    fanOut: new SqsBroadcastFanOutQueue(newSqsClient(), deps.fanOutQueueUrl),
  };
}
