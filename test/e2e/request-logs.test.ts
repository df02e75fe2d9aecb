import { randomBytes } from 'node:crypto';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodiesFrom, bodiesPlace, createdAtOf } from '../../functions/adapters/dynamodb/request-log-items.js';
import { REDACTED } from '../../functions/request-logs/model.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Request logs on the local service as on AWS: the real handlers emit their lines, the local
 * subscription hands them to the real writer in CloudWatch Logs' event shape, and GET /v1/logs
 * reads them back. The secrets of real answers and a real attachment never reach the table.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 300,
    domainCheckIntervalMs: 100,
    rateLimitPerSecond: 1000,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  receiver = await startReceiver();
  expect((await api.call('POST', '/domains', { body: { domain: 'acme.test' } })).status).toBe(201);
  await waitFor(
    () => api.call('GET', '/domains'),
    (r) => r.json?.data?.[0]?.status === 'verified',
  );
}, 60_000);
afterAll(async () => {
  await api?.close();
  await service?.stop();
  await receiver?.close();
});

const tableText = async () => {
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
  // A log's bodies are stored compressed with its group's, in slices over the group's first items:
  // each log item gets its bodies as text, so a secret in one would show.
  const bySk = new Map(items.map((item) => [String(item.sk), item]));
  for (const item of items) {
    if (!String(item.pk).startsWith('LOGS#')) continue;
    const place = bodiesPlace(item);
    const [request, response] = bodiesFrom(
      place,
      place.holders.map((holder) => bySk.get(`LOG#${holder}`)),
    );
    Object.assign(item, { request_text: request, response_text: response });
  }
  return { items };
};

/** The logs of one endpoint and method, newest first, once the writer has stored `count` of them. */
const logsOf = async (method: string, endpoint: string, count = 1) => {
  const found = await waitFor(
    async () => {
      await service.idle();
      return api.call('GET', '/logs?limit=100');
    },
    (r) =>
      (r.json?.data ?? []).filter(
        (e: { method: string; endpoint: string }) => e.method === method && e.endpoint === endpoint,
      ).length >= count,
    15_000,
  );
  expectResendShape(found.json, 'ListLogsResponse');
  return found.json.data.filter(
    (e: { method: string; endpoint: string }) => e.method === method && e.endpoint === endpoint,
  ) as { id: string; response_status: number; api_key_id: string | null }[];
};
const logBody = async (id: string) => {
  const one = await api.call('GET', `/logs/${id}`);
  expect(one.status).toBe(200);
  expectResendShape(one.json, 'Log');
  return one.json;
};

describe('request logs on the local service', () => {
  it('keeps no secret: a new key, webhook signing secrets, attachment contents, download links, the caller’s key', async () => {
    const key = await api.call('POST', '/api-keys', { body: { name: 'logged' } });
    expect(key.status).toBe(201);
    const hook = await api.call('POST', '/webhooks', {
      body: { endpoint: receiver.url, events: ['email.sent'] },
    });
    expect(hook.status).toBe(201);
    const got = await api.call('GET', `/webhooks/${hook.json.id}`);
    const rotated = await api.call('POST', `/webhooks/${hook.json.id}/signing-secret/rotate`);
    expect(rotated.status).toBe(200);
    const file = randomBytes(3000).toString('base64');
    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <billing@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Logged',
        text: 'See attached.',
        attachments: [{ filename: 'report.pdf', content: file }],
      },
    });
    expect(sent.status).toBe(200);
    const batch = await api.call('POST', '/emails/batch', {
      body: [
        {
          from: 'Acme <billing@acme.test>',
          to: 'success@simulator.amazonses.com',
          subject: 'Batch logged',
          text: 'x',
          attachments: [{ filename: 'b.pdf', content: file }],
        },
      ],
    });
    // Refused (a batch takes no attachments, as Resend's), and logged with its body redacted all the same.
    expect(batch.status).toBe(400);
    const attachments = await api.call('GET', `/emails/${sent.json.id}/attachments`);
    expect(attachments.status).toBe(200);
    const link = attachments.json.data[0].download_url as string;
    expect(link).toMatch(/^https?:/);

    const secrets = [
      key.json.token,
      hook.json.signing_secret,
      rotated.json.signing_secret,
      file,
      link,
      service.apiKey,
    ];
    const [keyLog] = await logsOf('POST', '/v1/api-keys');
    expect((await logBody(keyLog?.id as string)).response_body).toMatchObject({ token: REDACTED });
    const [hookLog] = await logsOf('POST', '/v1/webhooks');
    expect((await logBody(hookLog?.id as string)).response_body).toMatchObject({ signing_secret: REDACTED });
    const [getHookLog] = await logsOf('GET', `/v1/webhooks/${hook.json.id}`);
    expect(got.json.signing_secret).toBe(hook.json.signing_secret);
    expect((await logBody(getHookLog?.id as string)).response_body).toMatchObject({
      signing_secret: REDACTED,
    });
    const [sendLog] = await logsOf('POST', '/v1/emails');
    const sendBody = await logBody(sendLog?.id as string);
    expect(sendBody.request_body.attachments).toEqual([{ filename: 'report.pdf', content: REDACTED }]);
    expect(sendBody.response_body).toMatchObject({ id: sent.json.id });
    const [batchLog] = await logsOf('POST', '/v1/emails/batch');
    expect((await logBody(batchLog?.id as string)).request_body.json[0].attachments[0].content).toBe(
      REDACTED,
    );
    const [listLog] = await logsOf('GET', `/v1/emails/${sent.json.id}/attachments`);
    expect((await logBody(listLog?.id as string)).response_body.data[0].download_url).toBe(REDACTED);
    await logsOf('POST', `/v1/webhooks/${hook.json.id}/signing-secret/rotate`);

    // The webhook's own item keeps its secret (it signs with it); the log items keep none.
    const { items } = await tableText();
    const logItems = items.filter((item) => String(item.pk).startsWith('LOGS#'));
    for (const secret of secrets) expect(JSON.stringify(logItems)).not.toContain(secret);
    expect(logItems.length).toBeGreaterThanOrEqual(8);
    expect(logItems.filter((item) => item.request_text !== null).length).toBeGreaterThanOrEqual(4);
    for (const item of logItems)
      expect(item.expires_at).toBe(
        Math.floor(Date.parse(createdAtOf(String(item.sk).slice(4))) / 1000) + 30 * 86_400,
      );
  }, 60_000);

  it('logs 401s without a key id; not its own reads; filters by status class; pages by cursor', async () => {
    expect((await api.call('GET', '/domains', { key: 'esk_wrong-key-wrong-key-wrong' })).status).toBe(401);
    const [unauthorized] = await logsOf('GET', '/v1/domains');
    expect(unauthorized).toMatchObject({ response_status: 401, api_key_id: null });
    const all = await api.call('GET', '/logs?limit=100');
    expect(all.json.data.some((e: { endpoint: string }) => e.endpoint.startsWith('/v1/logs'))).toBe(false);
    const errors = await api.call('GET', '/logs?status=4xx');
    expect(errors.json.data.length).toBeGreaterThan(0);
    expect(
      errors.json.data.every(
        (e: { response_status: number }) => e.response_status >= 400 && e.response_status < 500,
      ),
    ).toBe(true);
    const first = await api.call('GET', '/logs?limit=2');
    const next = await api.call('GET', `/logs?limit=2&after=${first.json.data[1].id}`);
    expect(next.json.data[0].id < first.json.data[1].id).toBe(true);
    expect((await api.call('GET', '/logs/0190a1b2-0000-7000-8000-000000000000')).status).toBe(404);
  }, 30_000);
});
