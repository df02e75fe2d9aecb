/**
 * What each function may load at init, as built for deployment (lib/bundling.ts): every byte Node
 * reads, parses and runs before the first request is a cold start's cost. The budgets are held by
 * test/e2e/bundle-budgets.test.ts (sizes) and reported by `npm run bench` (sizes and times, with
 * the first typical request, so code deferred but needed by every request is counted there).
 */
const KB = 1024;

/** A function that reads and writes the table, and calls anything else only on some requests. */
export const TABLE_BUDGET = 300 * KB;

/**
 * A function whose every request calls SES, S3 or SQS besides the table, or resolves and connects
 * on a user's behalf (webhook endpoints), or the send path.
 */
export const BEYOND_TABLE_BUDGET = 460 * KB;

/** send-email's median import time, at most this many times list-emails' (the bench). */
export const SEND_IMPORT_RATIO = 1.4;

/**
 * The functions given the larger budget, each with the packages its every request uses (the SDK
 * clients it calls; Powertools' Metrics where every invocation counts): those must be loaded at
 * init (deferring them would move their cost to the first request, not remove it).
 */
export const BEYOND_THE_TABLE: Readonly<Record<string, readonly string[]>> = {
  // The send path.
  'send-email': ['@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
  'send-batch': ['@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
  'process-send-queue': ['@aws-sdk/client-sesv2', '@aws-sdk/client-sqs', '@aws-lambda-powertools/metrics'],
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
  // SQS on every request or run.
  'replay-webhook-event': ['@aws-sdk/client-sqs'],
  'sweep-emails': ['@aws-sdk/client-sqs'],
  // The SES events consumer (its webhook events go to SQS).
  'process-ses-events': ['@aws-lambda-powertools/metrics'],
  // A user's endpoint, resolved and checked against private addresses (ipaddr.js) on every request:
  // delivered to, or checked before it is added.
  'deliver-webhooks': ['@aws-lambda-powertools/metrics', 'ipaddr.js'],
  'create-webhook': ['ipaddr.js'],
};

export const budgetOf = (name: string): number =>
  name in BEYOND_THE_TABLE ? BEYOND_TABLE_BUDGET : TABLE_BUDGET;

/** What a function on the table budget must not load at init (each is loaded on first use, where it is used). */
export const NOT_AT_INIT = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-sesv2',
  'chrono-node',
  'mime',
  '@aws-lambda-powertools/metrics',
] as const;
