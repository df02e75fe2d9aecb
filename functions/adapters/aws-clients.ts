import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import type { RetryStrategyV2, RetryToken } from '@smithy/types';
import { SesConnections } from './ses/connections.js';

/**
 * Every AWS client the functions use is built here (S3's in s3/client.ts, a module of its own so
 * that a function loading it on first use keeps it out of its init), once per container, with endpoints and
 * credentials from the environment (Lambda's, or the local runtime's `AWS_ENDPOINT_URL_*`).
 *
 * One place also lets the local runtime and the tests add middleware to every client (to record
 * which function makes which AWS call, for the grants test); on Lambda none is ever added.
 */
// biome-ignore lint/suspicious/noExplicitAny: a middleware plugin applies to every client's stack
type ClientPlugin = { applyToStack: (stack: any) => void };
const plugins: ClientPlugin[] = [];

/** Adds a middleware plugin to every client built from now on (local runtime and tests only). */
export function useClientPlugin(plugin: ClientPlugin): () => void {
  plugins.push(plugin);
  return () => {
    plugins.splice(plugins.indexOf(plugin), 1);
  };
}

export function withPlugins<C extends { middlewareStack: { use(plugin: never): void } }>(client: C): C {
  for (const plugin of plugins) client.middlewareStack.use(plugin as never);
  return client;
}

export const newDynamoDbClient = () => withPlugins(new DynamoDBClient({}));

/**
 * Retries for the rate writes (api-keys/rate-limit.ts): a throttled write is never retried (its shard
 * is taking more than DynamoDB allows: the caller tries another shard, or answers 429, at once,
 * where the SDK would wait 0.5 s and more and add to the load); any other retryable error once,
 * after 20 ms.
 */
export const rateWriteRetries: RetryStrategyV2 = {
  acquireInitialRetryToken: async () => retryToken(0),
  refreshRetryTokenForRetry: async (token, { errorType }) => {
    if (token.getRetryCount() >= 1 || (errorType !== 'TRANSIENT' && errorType !== 'SERVER_ERROR'))
      throw new Error('not retried');
    return retryToken(token.getRetryCount() + 1);
  },
  recordSuccess: () => undefined,
};
const retryToken = (count: number): RetryToken => ({
  getRetryCount: () => count,
  getRetryDelay: () => (count ? 20 : 0),
});

/** DynamoDB for the per-key rate writes: see rateWriteRetries. */
export const newDynamoDbRateClient = () =>
  withPlugins(new DynamoDBClient({ maxAttempts: 2, retryStrategy: rateWriteRetries }));

/** `config`: only the local runtime passes one (its pollers talk to the local queues). */
export const newSqsClient = (config: SQSClientConfig = {}) => withPlugins(new SQSClient(config));

/** SES for its identity API: the SDK's default retries (every identity call is safe to repeat). */
export const newSesClient = () => withPlugins(new SESv2Client({}));

/**
 * SES for the account's sending limits (GetAccount), read beside the sending: short waits and one
 * retry, so a slow or unreachable SES API never holds a batch (its last known limits are used).
 */
export const newSesAccountClient = () =>
  withPlugins(
    new SESv2Client({
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
    }),
  );

export interface SendClientTimeouts {
  /** Longest wait for a connection to SES; past it, SES never saw the request. */
  connectMs: number;
  /** Longest wait for SES's answer once the request is sent; past it, the outcome is unknown. */
  requestMs: number;
  /** Its connections (the mailer closes the idle ones before the invocation returns). */
  connections?: SesConnections;
}

/**
 * SES for sending: exactly one attempt per call. The SDK's retries would repeat a SendEmail whose
 * first try timed out after SES accepted it, which is a second email; whether and when to try
 * again is decided by the send consumer, from what SES's answer (or its absence) means.
 *
 * Its connections are kept alive within an invocation and never across a freeze, and an error on
 * a connection that was never made is marked as never sent (ses/connections.ts): a kept-alive
 * socket gone stale while Lambda froze the function would fail its next request with a reset that
 * cannot be told from one after SES read the request. `socketTimeout` also bounds a response that
 * stalls after its headers (where `requestTimeout` stops counting).
 */
export const newSesSendClient = ({
  connectMs,
  requestMs,
  connections = new SesConnections({ connectMs }),
}: SendClientTimeouts) =>
  withPlugins(
    new SESv2Client({
      maxAttempts: 1,
      requestHandler: {
        connectionTimeout: connectMs,
        requestTimeout: requestMs,
        socketTimeout: requestMs,
        throwOnRequestTimeout: true,
        httpsAgent: connections.httpsAgent,
        httpAgent: connections.httpAgent,
      },
    }),
  );
