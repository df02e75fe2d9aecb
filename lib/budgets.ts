/**
 * What each function may load at init, as built for deployment (lib/bundling.ts): every byte Node
 * reads, parses and runs before the first request is a cold start's cost. The budgets are held by
 * test/e2e/bundle-budgets.test.ts (sizes) and reported by `npm run bench` (sizes and times, with
 * the first typical request, so code deferred but needed by every request is counted there).
 */
const KB = 1024;

/** A function that reads and writes the table, and calls anything else only on some requests. */
export const TABLE_BUDGET = 300 * KB;

/** A function whose every request calls SES or S3 besides the table, and the send path. */
export const BEYOND_TABLE_BUDGET = 460 * KB;

/**
 * receive-email and sweep-received: every invocation reads the raw message from S3, parses it with
 * postal-mime (76 KB, needed by every message, so deferring it would only move its cost), writes the
 * table and S3 and publishes `email.received` to SQS. SES invokes receive-email asynchronously,
 * after it has answered the sending server, so no caller waits on its cold start.
 */
export const RECEIVING_BUDGET = 520 * KB;
export const ON_RECEIVING_BUDGET: ReadonlySet<string> = new Set(['receive-email', 'sweep-received']);

/**
 * The audience writes that hold the most on the table budget: a contact's create (its properties
 * checked against their definitions, the contact, its id item, memberships and choices written,
 * contact.created raised: the publisher's code, its queue's client loaded only when an endpoint takes
 * the event) and the one-click unsubscribe (an HMAC token verified with keys read through the
 * secrets extension, the choice or contact written, the metric counted, the event raised). Measured
 * at 302 and 311 KB after issue 40; this says so rather than let them pass unnoticed at 300. The
 * one-click measured 320.03 KB after issue 41 (it also tells a broadcast's tally, in a transaction),
 * so 330.
 */
export const AUDIENCE_WRITE_BUDGET = 330 * KB;
export const ON_AUDIENCE_WRITE_BUDGET: ReadonlySet<string> = new Set([
  'create-contact',
  'create-audience-contact',
  'unsubscribe',
]);

/**
 * Two that hold a table of the whole API and passed 300 KB by under 1 KB with issue 41's eleven
 * routes and their settings: route-not-found (300.8 KB: it answers 405 with the methods a path
 * takes, so it loads every route's declaration) and create-webhook (300.1 KB). Named, rather than
 * let past 300 unnoticed; the table budget stays 300 for the rest.
 */
export const WHOLE_API_BUDGET = 310 * KB;
export const ON_WHOLE_API_BUDGET: ReadonlySet<string> = new Set(['route-not-found', 'create-webhook']);

/** send-email's median import time, at most this many times list-emails' (the bench). */
export const SEND_IMPORT_RATIO = 1.4;

/**
 * The functions on the larger budget: the send path, and those whose every request calls SES or
 * S3 (the list: domains, the domain check, the attachment routes, the SES events consumer;
 * and the removal of addresses from SES's suppression list; a received email and its attachments).
 * Each loads at init an AWS client beyond DynamoDB (the budget test checks it), so none is here for
 * want of a smaller build.
 */
export const ON_BEYOND_TABLE_BUDGET: ReadonlySet<string> = new Set([
  'send-email',
  'send-batch',
  'process-send-queue',
  'process-broadcast-queue',
  'create-domain',
  'get-domain',
  'verify-domain',
  'update-domain',
  'delete-domain',
  'check-domains',
  'delete-suppression',
  'batch-remove-suppressions',
  'list-attachments',
  'get-attachment',
  'get-received-email',
  'list-received-attachments',
  'get-received-attachment',
  'process-ses-events',
  'sweep-emails',
  'dispatch-scheduled',
  'requeue-webhook-retries',
  'deliver-webhooks',
  'sync-receipt-rules',
  'set-up-receiving',
  'delete-segment',
  'delete-audience',
  'clean-up-audience',
  'delete-topic',
  'create-contact-import',
  'create-contact-import-upload',
  'import-contacts',
  // Each step queues its emails on the broadcast lane and its next step (SQS on every run).
  'fan-out-broadcast',
  // SQS on every request (LOADED_AT_INIT), as the deletes that queue their clean-up.
  'replay-webhook-event',
  // A broadcast's send queues its fan-out's first step (SQS) on every request.
  'send-broadcast',
]);

/**
 * What a function's every request uses, which must therefore be loaded at init (deferring it would
 * move its cost into the first request, not remove it): the SDK clients it calls, Powertools'
 * Metrics where every invocation counts, ipaddr.js where every request checks a user's endpoint.
 */
export const LOADED_AT_INIT: Readonly<Record<string, readonly string[]>> = {
  // The send path.
  'send-email': ['@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
  'send-batch': ['@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
  'process-send-queue': ['@aws-sdk/client-sesv2', '@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
  // The broadcast lane's consumer: the send consumer's code.
  'process-broadcast-queue': [
    '@aws-sdk/client-sesv2',
    '@aws-sdk/client-sqs',
    '@aws-lambda-powertools/metrics',
  ],
  // SES identities and configuration sets on every request.
  'create-domain': ['@aws-sdk/client-sesv2'],
  'get-domain': ['@aws-sdk/client-sesv2'],
  'verify-domain': ['@aws-sdk/client-sesv2'],
  'update-domain': ['@aws-sdk/client-sesv2'],
  'delete-domain': ['@aws-sdk/client-sesv2'],
  'check-domains': ['@aws-sdk/client-sesv2'],
  // SES's account suppression list on every request.
  'delete-suppression': ['@aws-sdk/client-sesv2'],
  'batch-remove-suppressions': ['@aws-sdk/client-sesv2'],
  // Presigned S3 links on every request.
  'list-attachments': ['@aws-sdk/client-s3'],
  'get-attachment': ['@aws-sdk/client-s3'],
  // A received email's bodies read and its raw message's link signed; its attachments' links.
  'get-received-email': ['@aws-sdk/client-s3'],
  'list-received-attachments': ['@aws-sdk/client-s3'],
  'get-received-attachment': ['@aws-sdk/client-s3'],
  // SQS on every request or run.
  'replay-webhook-event': ['@aws-sdk/client-sqs'],
  // A deleted segment's memberships handed to the audience clean-up queue; the clean-up hands on
  // what one run leaves.
  'delete-segment': ['@aws-sdk/client-sqs'],
  'delete-audience': ['@aws-sdk/client-sqs'],
  'clean-up-audience': ['@aws-sdk/client-sqs'],
  // A deleted topic's choices handed to the audience clean-up queue.
  'delete-topic': ['@aws-sdk/client-sqs'],
  // An import's file stored (S3) and its first step queued (SQS) on every request; an upload's
  // presigned PUT; each import step queues the next.
  'create-contact-import': ['@aws-sdk/client-s3', '@aws-sdk/client-sqs'],
  'create-contact-import-upload': ['@aws-sdk/client-s3'],
  'import-contacts': ['@aws-sdk/client-sqs'],
  // A broadcast's send queues its fan-out's first step (create-broadcast only with send: true: on first use).
  'send-broadcast': ['@aws-sdk/client-sqs'],
  // A broadcast's step: its emails on the lane and its next step queued, every run.
  'fan-out-broadcast': ['@aws-sdk/client-sqs'],
  'sweep-emails': ['@aws-sdk/client-sqs'],
  // SQS on every run that finds something due: a function run on a schedule keeps no caller
  // waiting on its cold start, and is warm for most runs.
  'dispatch-scheduled': ['@aws-sdk/client-sqs'],
  'requeue-webhook-retries': ['@aws-sdk/client-sqs'],
  // The SES events consumer: every event counted, its webhook events to SQS.
  'process-ses-events': ['@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
  // A user's endpoint, resolved and checked against private addresses (ipaddr.js) on every request:
  // delivered to (and retried through SQS), or checked before it is added.
  'deliver-webhooks': ['@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics', 'ipaddr.js'],
  'create-webhook': ['ipaddr.js'],
  // SES v1's receipt rules on every run: the writer, and the custom resource (which also queues a sync).
  'sync-receipt-rules': ['@aws-sdk/client-ses'],
  'set-up-receiving': ['@aws-sdk/client-ses', '@aws-sdk/client-sqs'],
  // A received message read from S3 (and its parts written), its event published; the sweep also
  // reads receive-email's failure destination (SQS) on every run.
  'receive-email': ['@aws-sdk/client-s3', '@aws-sdk/client-sqs'],
  'sweep-received': ['@aws-sdk/client-s3', '@aws-sdk/client-sqs'],
};

export const budgetOf = (name: string): number =>
  ON_RECEIVING_BUDGET.has(name)
    ? RECEIVING_BUDGET
    : ON_BEYOND_TABLE_BUDGET.has(name)
      ? BEYOND_TABLE_BUDGET
      : ON_AUDIENCE_WRITE_BUDGET.has(name)
        ? AUDIENCE_WRITE_BUDGET
        : ON_WHOLE_API_BUDGET.has(name)
          ? WHOLE_API_BUDGET
          : TABLE_BUDGET;

/**
 * What a function on the table budget must not load at init, unless its every request uses it
 * (LOADED_AT_INIT): each is loaded on first use where it is used.
 */
export const NOT_AT_INIT = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-sesv2',
  '@aws-sdk/client-ses',
  'chrono-node',
  'mime',
  '@aws-lambda-powertools/metrics',
  'ipaddr.js',
] as const;

/** AWS clients beyond DynamoDB: a function on the larger budget loads one of them at init. */
export const BEYOND_TABLE_CLIENTS = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-sesv2',
  '@aws-sdk/client-ses',
];
