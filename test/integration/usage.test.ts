import { GetAccountCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import type { GetUsageResponseSuccess } from 'resend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoMetricsStore } from '../../functions/adapters/dynamodb/metrics-store.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoSendQuotaStore } from '../../functions/adapters/dynamodb/send-pacer.js';
import { FUNCTIONS } from '../../functions/catalog.js';
import { makeHandler } from '../../functions/handlers/get-usage.js';
import { usageSchema } from '../../functions/usage/answers.js';
import type { UsageBody } from '../../functions/usage/model.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey, storeDomain } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * GET /v1/usage through its handler against dynalite: SDK 6.38's shape, from the account's SES
 * limits as the send consumers stored them beside the schedule and from the metrics' counters.
 * SES is mocked (aws-sdk-client-mock) to prove no request reads GetAccount.
 */
const ses = mockClient(SESv2Client);
let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let metrics: DynamoMetricsStore;
let sendQuota: DynamoSendQuotaStore;
let token: string;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const NOW = Date.parse('2026-11-22T10:30:00Z');
const READ_AT = NOW - 120_000;

// The SDK's type takes our answer (our `sending` is an addition).
const sdkShape: GetUsageResponseSuccess = {} as UsageBody;
void sdkShape;

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  token = await fullAccessKey(repos.apiKeys);
  await storeDomain(repos.domains, 'acme.test', 'verified');
  await storeDomain(repos.domains, 'news.acme.test', 'pending');
  sendQuota = new DynamoSendQuotaStore(table.db, table.tableName);
  // Counted an hour before the request, and in the month before (not this month's, not the last 24 hours').
  metrics = new DynamoMetricsStore(table.db, table.tableName, () => NOW - 3_600_000);
  await metrics.count('acme.test', { sent: 7, received: 2 }, 'a');
  await metrics.count('news.acme.test', { sent: 5 }, 'b');
  await new DynamoMetricsStore(table.db, table.tableName, () => Date.parse('2026-10-31T23:00:00Z')).count(
    'acme.test',
    { sent: 100 },
    'c',
  );
});
afterAll(() => table.stop());
beforeEach(() => {
  ses.reset();
  ses.on(GetAccountCommand).resolves({
    SendQuota: { MaxSendRate: 14, Max24HourSend: 50_000, SentLast24Hours: 41_000 },
    SendingEnabled: true,
  });
});

const usage = async () => {
  const response = (await makeHandler({
    apiKeys: repos.apiKeys,
    quota: sendQuota,
    metrics,
    domains: repos.domains,
    clock: { now: () => new Date(NOW) },
    log,
    rateLimit: { perSecond: 10 },
  })(httpEvent({ method: 'GET', path: '/v1/usage', token }), context())) as APIGatewayProxyStructuredResultV2;
  expect(response.statusCode).toBe(200);
  const body = parseBody(response);
  expect(usageSchema.safeParse(body).success).toBe(true);
  return body as UsageBody;
};

describe('GET /v1/usage', () => {
  it('before SES was ever read: no daily limit, our own counts, sending not paused', async () => {
    const body = await usage();
    expect(body.emails.daily).toMatchObject({ used: 12, limit: null, sent: 12, received: 2 });
    expect(body.emails.monthly).toMatchObject({ used: 12, limit: -1, resets_at: '2026-12-01T00:00:00.000Z' });
    expect(body.sending).toEqual({ paused: false, max_send_rate: null, limits_read_at: null });
  });

  it('answers from the stored account limits and the counters, and never calls GetAccount', async () => {
    await sendQuota.put(
      { maxSendRate: 14, max24HourSend: 50_000, sentLast24Hours: 41_000, sendingEnabled: true },
      READ_AT,
    );
    for (let i = 0; i < 3; i++) {
      const body = await usage();
      expect(body).toMatchObject({
        object: 'usage',
        emails: {
          daily: {
            used: 41_000,
            limit: 50_000,
            sent: 12,
            received: 2,
            resets_at: new Date(READ_AT + 86_400_000).toISOString(),
          },
          // November has 30 days.
          monthly: {
            used: 12,
            limit: 1_500_000,
            sent: 12,
            received: 2,
            resets_at: '2026-12-01T00:00:00.000Z',
          },
        },
        domains: { used: 2, limit: null },
        rate_limit: { limit: 10, duration: '1s' },
        contacts: { used: 0, limit: 0 },
        sending: { paused: false, max_send_rate: 14, limits_read_at: new Date(READ_AT).toISOString() },
      });
    }
    expect(ses.commandCalls(GetAccountCommand)).toHaveLength(0);
    // Nor could it: its function is granted no ses:GetAccount (the catalog's grants are the stack's).
    expect(FUNCTIONS['get-usage']).not.toHaveProperty('sesAccount');
    expect(FUNCTIONS['process-send-queue']).toHaveProperty('sesAccount', true);
  });

  it('says when SES has paused the account’s sending, and an unlimited quota has no limit', async () => {
    await sendQuota.put(
      { maxSendRate: 14, max24HourSend: -1, sentLast24Hours: 10, sendingEnabled: false },
      READ_AT + 1,
    );
    const body = await usage();
    expect(body.sending.paused).toBe(true);
    expect(body.emails.daily.limit).toBeNull();
    expect(body.emails.monthly.limit).toBe(-1);
  });
});
