import type { SQSEvent } from 'aws-lambda';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { type SyncRulesDeps, syncRules } from '../receiving/sync-rules.js';
import { syncReceiptRulesDeps } from '../wiring/receiving-rules.js';

/**
 * The receipt-rule writer, the consumer of its FIFO queue (one message group, batch size 1: one
 * writer at a time). Every message means "bring the rules to the domains as stored now", so one
 * run answers all the messages of its batch. A failure is thrown: the message comes back after its
 * visibility timeout (and, after the queue's receive count, goes to its dead-letter queue), and,
 * while any domain receives, the scheduled domain check asks again about every 2 minutes anyway.
 */
export const makeHandler = (deps: SyncRulesDeps) => async (event: SQSEvent) => {
  const result = await syncRules(deps);
  log.info('receipt rules synced', { ...result, requests: event.Records.length });
  return result;
};

export const handler = backgroundHandler(() => makeHandler(syncReceiptRulesDeps()));
