import { newSesAccountClient, newSesSendClient, newSqsClient } from '../adapters/aws-clients.js';
import {
  apiKeyRepository,
  broadcastStates,
  broadcastTally,
  domainRepository,
  emailRepository,
  metricsStore,
  openTable,
  repositoriesOf,
  sendPacer,
  sendQuotaStore,
  suppressionRepository,
  unpublishedEventStore,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import { fileFetcherOnFirstUse } from '../adapters/http/fetcher-on-first-use.js';
import { contentStoreOnFirstUse } from '../adapters/s3/content-store-on-first-use.js';
import { SesSendQuota } from '../adapters/ses/account.js';
import { SesConnections } from '../adapters/ses/connections.js';
import { SesMailer } from '../adapters/ses/mailer.js';
import { SqsEmailQueue } from '../adapters/sqs/email-queue.js';
import { senderOptions } from '../domains/domains.js';
import { log } from '../observability/logger.js';
import { countersLoadedAtInit } from '../observability/metrics-at-init.js';
import { loadConfig } from '../shared/config.js';
import { SendingLimits } from '../shared/pacing.js';
import { systemClock } from '../shared/ports.js';
import { eventPublisher } from '../wiring.js';
import { sendGateDeps, unsubscribeLinksOnFirstUse } from './send-gate.js';

/**
 * The wiring of the send consumer (process-send-queue). Apart from functions/wiring.ts because what a function loads on first use must be reached
 * by no static import of another function's: a module reached statically is part of that
 * function's init (even where none of its code runs), and `import()` of it then splits nothing off.
 */

/**
 * The send consumer: the emails, and SES with one attempt per call and bounded waits. `broadcast`:
 * the broadcast lane's consumer (process-broadcast-queue): the same, on the lane (what it defers goes
 * back there), transactional mail first on the schedule, and whether each email's broadcast was
 * canceled (emails/broadcast-lane.ts).
 */
export function consumerDeps(lane?: 'broadcast') {
  // Its queue's URL read with the rest, so one invalid setting names every other at once.
  const queueKey = lane ? ('BROADCAST_SEND_QUEUE_URL' as const) : ('SEND_QUEUE_URL' as const);
  const config = loadConfig(
    'TABLE_NAME',
    queueKey,
    'WEBHOOK_QUEUE_URL',
    'CONFIGURATION_SET_NAME',
    'CONTENT_BUCKET',
    'ATTACHMENT_ALLOW_LOOPBACK',
    'SENDER_OPTIONS_TTL_MS',
    'SES_CONNECT_TIMEOUT_MS',
    'SES_REQUEST_TIMEOUT_MS',
    'SEND_FETCH_TIMEOUT_MS',
    'SEND_CLAIM_MARGIN_MS',
    'SES_ACCOUNT_REFRESH_MS',
    'SES_MAX_SEND_RATE',
    'SEND_THROTTLE_BACKOFF_MS',
    'SEND_THROTTLE_BACKOFF_MAX_MS',
    'SEND_BLOCKED_RETRY_MIN_MS',
    'SEND_BLOCKED_RETRY_MAX_MS',
    'SEND_MAX_RECEIVE_COUNT',
  );
  const connections = new SesConnections({ connectMs: config.SES_CONNECT_TIMEOUT_MS });
  const ses = newSesSendClient({
    connectMs: config.SES_CONNECT_TIMEOUT_MS,
    requestMs: config.SES_REQUEST_TIMEOUT_MS,
    connections,
  });
  const table = openTable(config.TABLE_NAME);
  const {
    emails,
    suppressions,
    webhooks,
    apiKeys,
    pacer,
    quotaStore,
    domains,
    metrics,
    unpublished,
    broadcasts,
  } = repositoriesOf(table, {
    unpublished: unpublishedEventStore,
    emails: emailRepository,
    suppressions: suppressionRepository,
    webhooks: webhookRepository,
    apiKeys: apiKeyRepository,
    pacer: sendPacer,
    quotaStore: sendQuotaStore,
    domains: domainRepository,
    metrics: metricsStore,
    broadcasts: broadcastTally,
  });
  return {
    emails,
    metrics,
    // A broadcast's email tells its tally when it is sent, left out or ends unsent (emails/tally.ts).
    broadcasts,
    suppressions,
    apiKeys,
    // An email with topic_id: its recipients' choices, and their unsubscribe links (deliver-gate.ts).
    ...sendGateDeps(table, unsubscribeLinksOnFirstUse),
    // Each sender domain's tracking and configuration set, read once a minute per instance.
    senderOptions: senderOptions(domains, systemClock, config.SENDER_OPTIONS_TTL_MS),
    queue: new SqsEmailQueue(newSqsClient(), (config as Record<typeof queueKey, string>)[queueKey]),
    ...(lane ? { lane, broadcastStates: broadcastStates(table) } : {}),
    events: eventPublisher(webhooks, config.WEBHOOK_QUEUE_URL, unpublished),
    mailer: new SesMailer(ses, config.CONFIGURATION_SET_NAME, connections),
    // Only emails with content in the bucket, or attachments given by `path`, need these: loaded
    // on first use.
    content: contentStoreOnFirstUse(config.CONTENT_BUCKET),
    fetcher: fileFetcherOnFirstUse(
      { allowLoopback: config.ATTACHMENT_ALLOW_LOOPBACK === 'true' },
      { fetchTimeoutMs: config.SEND_FETCH_TIMEOUT_MS },
    ),
    // Every consumer instance books its batches on one schedule in the table, at the account's rate,
    // which one instance reads from SES for all and keeps beside the schedule.
    pace: {
      pacer,
      limits: new SendingLimits(new SesSendQuota(newSesAccountClient()), {
        refreshMs: config.SES_ACCOUNT_REFRESH_MS,
        blockedRecheckMs: config.SEND_BLOCKED_RETRY_MIN_MS,
        store: quotaStore,
        ...(config.SES_MAX_SEND_RATE ? { rateOverride: config.SES_MAX_SEND_RATE } : {}),
        onReadError: (error) =>
          log.warn('could not read the SES account limits; using the last known, if any', { error }),
      }),
    },
    budget: {
      sendMs: config.SES_CONNECT_TIMEOUT_MS + config.SES_REQUEST_TIMEOUT_MS,
      fetchMs: config.SEND_FETCH_TIMEOUT_MS,
      marginMs: config.SEND_CLAIM_MARGIN_MS,
    },
    deferTimings: {
      throttleBackoffMs: config.SEND_THROTTLE_BACKOFF_MS,
      throttleBackoffMaxMs: config.SEND_THROTTLE_BACKOFF_MAX_MS,
      blockedRetryMinMs: config.SEND_BLOCKED_RETRY_MIN_MS,
      blockedRetryMaxMs: config.SEND_BLOCKED_RETRY_MAX_MS,
    },
    clock: systemClock,
    maxReceiveCount: config.SEND_MAX_RECEIVE_COUNT,
    log,
    counters: countersLoadedAtInit(),
  };
}
