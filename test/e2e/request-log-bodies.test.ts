import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';
import { expectResendShape } from '../support/resend-schema.js';

/**
 * The local service with request logs' bodies off, as a stack deployed with
 * `-c requestLogBodies=false` (docs/logs.md): a send is logged, its log keeps no body, and no item
 * of the table's logs holds a trace of the email. Its own file: the handlers' settings are read
 * once per process.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 300,
    domainCheckIntervalMs: 100,
    rateLimitPerSecond: 1000,
    requestLogBodies: false,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  expect((await api.call('POST', '/domains', { body: { domain: 'clinic.test' } })).status).toBe(201);
  await waitFor(
    () => api.call('GET', '/domains'),
    (r) => r.json?.data?.[0]?.status === 'verified',
  );
}, 60_000);
afterAll(async () => {
  await api?.close();
  await service?.stop();
});

const logItems = async () => {
  const client = new DynamoDBClient({
    endpoint: service.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const items: Record<string, unknown>[] = [];
  let start: Record<string, never> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: service.tableName, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []).map((item) => unmarshall(item)));
    start = page.LastEvaluatedKey as typeof start;
  } while (start);
  client.destroy();
  return items.filter((item) => String(item.pk).startsWith('LOGS#'));
};

describe('request logs without bodies on the local service (REQUEST_LOG_BODIES=false)', () => {
  it('logs a send with its summary only: no recipient, subject or HTML in the log or the table', async () => {
    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Clinic <results@clinic.test>',
        to: 'alice.private@example.com',
        subject: 'Your test results',
        html: '<p>Dear Alice, your diagnosis is ready</p>',
      },
    });
    expect(sent.status).toBe(200);
    const listed = await waitFor(
      async () => {
        await service.idle();
        return api.call('GET', '/logs?limit=100');
      },
      (r) => (r.json?.data ?? []).some((e: { endpoint: string }) => e.endpoint === '/v1/emails'),
      15_000,
    );
    const log = listed.json.data.find((e: { endpoint: string }) => e.endpoint === '/v1/emails');
    expect(log).toMatchObject({ method: 'POST', response_status: 200, api_key_id: expect.any(String) });
    const one = await api.call('GET', `/logs/${log.id}`);
    expect(one.status).toBe(200);
    expectResendShape(one.json, 'Log');
    expect(one.json).toMatchObject({ request_body: null, response_body: null });
    const stored = JSON.stringify(await logItems());
    expect(stored).toContain(log.id.slice(-12));
    for (const trace of ['alice.private', 'test results', 'diagnosis', sent.json.id])
      expect(stored).not.toContain(trace);
  });
});
