import { deflateRawSync, gzipSync } from 'node:zlib';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { DynamoRequestLogRepository } from '../../functions/adapters/dynamodb/request-log-repository.js';
import { makeHandler as makeCreateKey } from '../../functions/handlers/create-api-key.js';
import { makeHandler as makeGetLog } from '../../functions/handlers/get-log.js';
import { makeHandler as makeListKeys } from '../../functions/handlers/list-api-keys.js';
import { makeHandler as makeListLogs } from '../../functions/handlers/list-logs.js';
import { makeHandler as makeFallback } from '../../functions/handlers/route-not-found.js';
import { makeHandler as makeWriter } from '../../functions/handlers/write-request-logs.js';
import {
  logIdOf,
  logTimeOf,
  REDACTED,
  type RequestLogEntry,
  type RequestLogSink,
  requestLogLine,
} from '../../functions/request-logs/model.js';
import { parseRequestLogLine } from '../../functions/request-logs/reads.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * Request logs through the real handlers and the real writer against dynalite: lines emitted by the
 * middleware, delivered to the writer in CloudWatch Logs' subscription event (gzip, base64), then
 * read with GET /v1/logs and GET /v1/logs/{id} in API Gateway v2 events.
 */
let table: TestTable;
let apiKeys: DynamoApiKeyRepository;
let requestLogs: DynamoRequestLogRepository;
let token: string;
let lines: string[];
const capture: RequestLogSink = { write: (line) => void lines.push(line) };
const warnings: unknown[][] = [];
const log = {
  info: () => undefined,
  warn: (...args: unknown[]) => void warnings.push(args),
  error: (...args: unknown[]) => void warnings.push(args),
};

type Response = APIGatewayProxyStructuredResultV2;

beforeAll(async () => {
  table = await startTestTable();
  apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  requestLogs = new DynamoRequestLogRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
});
afterAll(() => table.stop());
beforeEach(() => {
  lines = [];
  warnings.length = 0;
});

/** What CloudWatch Logs hands the writer for these lines of one log group. */
const awslogs = (messages: string[], messageType = 'DATA_MESSAGE') => ({
  awslogs: {
    data: gzipSync(
      JSON.stringify({
        messageType,
        owner: '123456789012',
        logGroup: '/aws/lambda/EmailService-HttpcreateapikeyFunction',
        logStream: '2026/01/01/[$LATEST]abc',
        subscriptionFilters: ['request-logs'],
        logEvents: messages.map((message, i) => ({ id: String(i), timestamp: Date.now(), message })),
      }),
    ).toString('base64'),
  },
});
const writer = (event: ReturnType<typeof awslogs>) =>
  makeWriter({ requestLogs, retentionDays: 30, log })(event);
const deliver = async () => {
  const result = await writer(awslogs(lines));
  lines = [];
  return result;
};

const createKey = (name: string, sink: RequestLogSink = capture) =>
  makeCreateKey({
    apiKeys,
    domains: new DynamoDomainRepository(table.db, table.tableName),
    clock: systemClock,
    log,
    requestLog: sink,
  })(
    httpEvent({
      method: 'POST',
      path: '/v1/api-keys',
      token,
      body: { name },
      headers: { 'user-agent': 'test/1.0' },
    }),
    context(),
  ) as Promise<Response>;
const listLogs = (query?: Record<string, string>) =>
  makeListLogs({ apiKeys, requestLogs, log, requestLog: capture })(
    httpEvent({ method: 'GET', path: '/v1/logs', token, query }),
    context(),
  ) as Promise<Response>;
const getLog = (id: string) =>
  makeGetLog({ apiKeys, requestLogs, log, requestLog: capture })(
    httpEvent({
      method: 'GET',
      path: `/v1/logs/${id}`,
      routeKey: 'GET /v1/logs/{id}',
      token,
      pathParameters: { id },
    }),
    context(),
  ) as Promise<Response>;

describe('request logs: emitted by the middleware, stored by the writer', () => {
  it('logs POST /v1/api-keys with the token redacted, no header but the user agent, and the key that asked', async () => {
    const created = await createKey('ci');
    expect(created.statusCode).toBe(201);
    const secret = parseBody(created).token as string;
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).not.toContain(token);
    expect(lines[0]).not.toMatch(/authorization/i);
    await deliver();
    const { Items } = await table.db.send(new ScanCommand({ TableName: table.tableName }));
    expect(JSON.stringify(Items)).not.toContain(secret);
    const listed = parseBody(await listLogs());
    expectResendShape(listed, 'ListLogsResponse');
    const entry = listed.data[0];
    expect(entry).toMatchObject({
      method: 'POST',
      endpoint: '/v1/api-keys',
      response_status: 201,
      user_agent: 'test/1.0',
      api_key_id: expect.stringMatching(/^key_/),
      duration_ms: expect.any(Number),
    });
    const one = await getLog(entry.id);
    expect(one.statusCode).toBe(200);
    const body = parseBody(one);
    expectResendShape(body, 'Log');
    expect(body.request_body).toEqual({ name: 'ci' });
    expect(body.response_body).toMatchObject({ id: parseBody(created).id, token: REDACTED });
  });

  it('logs answered errors: a 401 without a key (api_key_id null), a 404 of the fallback, a 422-style 400', async () => {
    const noKey = await makeListKeys({ apiKeys, log, requestLog: capture })(
      httpEvent({ method: 'GET', path: '/v1/api-keys', token: 'esk_not-a-real-key-at-all-0000' }),
      context(),
    );
    expect((noKey as Response).statusCode).toBe(401);
    const missing = await makeFallback({ apiKeys, log, requestLog: capture })(
      httpEvent({ method: 'GET', path: '/v1/nothing', token }),
      context(),
    );
    expect((missing as Response).statusCode).toBe(404);
    expect((await createKey('')).statusCode).toBe(400);
    expect(lines.join('\n')).not.toContain('esk_not-a-real-key');
    await deliver();
    const errors = parseBody(await listLogs({ status: '4xx', limit: '3' }));
    expectResendShape(errors, 'ListLogsResponse');
    // Newest first; two requests within one millisecond may sort either way, so by status here.
    const statuses = errors.data.map((e: { response_status: number }) => e.response_status);
    expect([...statuses].sort()).toEqual([400, 401, 404]);
    expect(errors.data.find((e: { response_status: number }) => e.response_status === 401)).toMatchObject({
      endpoint: '/v1/api-keys',
      api_key_id: null,
    });
    const ok = parseBody(await listLogs({ status: '2xx' }));
    expect(ok.data.every((e: { response_status: number }) => e.response_status < 300)).toBe(true);
  });

  it("does not log a method outside Resend's (a HEAD to the fallback), so no listed log has one its clients refuse", async () => {
    const head = await makeFallback({ apiKeys, log, requestLog: capture })(
      httpEvent({ method: 'HEAD', path: '/v1/nothing', token }),
      context(),
    );
    expect((head as Response).statusCode).toBe(404);
    expect(lines).toEqual([]);
  });

  it("does not log the log routes' own reads", async () => {
    await listLogs();
    await getLog('0190a1b2-0000-7000-8000-000000000000');
    expect(lines).toEqual([]);
  });

  it('a failing log sink never fails the request, and says so without the line', async () => {
    const broken: RequestLogSink = {
      write: () => {
        throw new Error('stdout is gone');
      },
    };
    const created = await createKey('still-created', broken);
    expect(created.statusCode).toBe(201);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain(parseBody(created).token);
  });

  it('pages with cursors (after, before) newest first, and refuses bad queries with 400', async () => {
    for (let i = 0; i < 5; i++) await createKey(`page-${i}`);
    await deliver();
    const first = parseBody(await listLogs({ limit: '2' }));
    expect(first.has_more).toBe(true);
    const second = parseBody(await listLogs({ limit: '2', after: first.data[1].id }));
    expect(second.data).toHaveLength(2);
    const ids = [...first.data, ...second.data].map((e: { id: string }) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const back = parseBody(await listLogs({ limit: '2', before: second.data[0].id }));
    expect(back.data.map((e: { id: string }) => e.id)).toEqual(first.data.map((e: { id: string }) => e.id));
    const bad: Record<string, string>[] = [
      { status: '200' },
      { after: 'em_1' },
      { limit: '0' },
      { after: ids[0] as string, before: ids[1] as string },
    ];
    for (const query of bad) {
      const refused = await listLogs(query);
      expect(refused.statusCode).toBe(400);
      expect(parseBody(refused).name).toBe('validation_error');
    }
  });

  it('answers 404 for an unknown log id and for what is not a log id', async () => {
    for (const id of ['0190a1b2-0000-7000-8000-000000000000', 'nope']) {
      const response = await getLog(id);
      expect(response.statusCode).toBe(404);
      expect(parseBody(response).name).toBe('not_found');
    }
  });

  it('the writer is idempotent on redelivery, skips other lines and control messages, and sets the TTL', async () => {
    await createKey('twice');
    const delivered = [...lines];
    const count = async () =>
      (await table.db.send(new ScanCommand({ TableName: table.tableName }))).Items?.filter((i) =>
        String(i.pk).startsWith('LOGS#'),
      ) ?? [];
    const before = (await count()).length;
    expect(
      await writer(awslogs([...delivered, '{"level":"INFO","message":"other"}', 'START RequestId: x'])),
    ).toEqual({
      stored: 1,
      skipped: 2,
      expired: 0,
    });
    await writer(awslogs([...delivered, ...delivered]));
    const items = await count();
    expect(items.length).toBe(before + 1);
    expect(await writer(awslogs([], 'CONTROL_MESSAGE'))).toEqual({ stored: 0, skipped: 0, expired: 0 });
    const sent = parseRequestLogLine(delivered[0] as string) as RequestLogEntry;
    const item = items.find((i) => i.sk === `LOG#${sent.id}`);
    expect(item?.expires_at).toBe(Math.floor(Date.parse(sent.created_at) / 1000) + 30 * 86_400);
    expect(await requestLogs.get(sent.id)).toEqual(sent);
    // Bodies are stored compressed, apart from the summary, and read back as sent.
    const big = { name: 'x'.repeat(3000) };
    const id = '0190a1b2-0000-7000-8000-00000000beef';
    await requestLogs.put([{ ...sent, id, request_body: JSON.stringify(big) }], 30);
    const stored = (await count()).find((i) => i.sk === `LOG#${id}`);
    expect(stored?.z).toBeInstanceOf(Uint8Array);
    expect(JSON.stringify(stored)).not.toContain('xxxxxxxxxx');
    expect(JSON.parse((await requestLogs.get(id))?.request_body ?? '')).toEqual(big);
    expect((await requestLogs.get(id))?.created_at).toBe(sent.created_at);
    expect((await count()).length).toBe(items.length + 1);
    lines = [];
  });

  it('a batch of logs: bodies compressed together over the first items, each log read back whole, errors listed by status', async () => {
    const entries: RequestLogEntry[] = Array.from({ length: 14 }, (_, i) => ({
      id: `0190a1b2-${String(1000 + i).padStart(4, '0')}-7000-8000-00000000c0de`,
      created_at: new Date(Date.parse('2024-07-01T00:00:00Z') + i).toISOString(),
      method: 'POST',
      endpoint: '/v1/emails',
      response_status: i % 7 === 3 ? 422 : 200,
      user_agent: i % 2 ? 'resend-node:6.38.0' : null,
      api_key_id: i % 3 ? 'key_1' : null,
      duration_ms: 10 + i,
      request_body: JSON.stringify({
        to: [`c${i}@example.com`],
        subject: `Receipt ${i}`,
        html: `<p>${'Thank you. '.repeat(200)}${i}</p>`,
      }),
      response_body: i % 4 ? JSON.stringify({ id: `em_${i}` }) : null,
    }));
    await requestLogs.put(entries, 30);
    for (const entry of entries) expect(await requestLogs.get(entry.id)).toEqual(entry);
    const all = (await table.db.send(new ScanCommand({ TableName: table.tableName }))).Items ?? [];
    const ours = all.filter((i) => String(i.sk).endsWith('c0de'));
    // Fourteen logs, two groups: the bodies in a few items' slices, not in all of them.
    expect(ours).toHaveLength(14);
    const holders = ours.filter((i) => i.z !== undefined).length;
    expect(holders).toBeGreaterThan(1);
    expect(holders).toBeLessThan(14);
    // Only the errors have a status index entry.
    expect(ours.filter((i) => i.gsi2pk !== undefined).map((i) => i.s)).toEqual([422, 422]);
    const errors = parseBody(await listLogs({ status: '4xx', limit: '100' }));
    const errorIds = entries.filter((e) => e.response_status === 422).map((e) => e.id);
    expect(errors.data.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining(errorIds));
    const ok = parseBody(await listLogs({ status: '2xx', limit: '100' }));
    expect(ok.data.every((e: { response_status: number }) => e.response_status < 300)).toBe(true);
    expect(ok.data.map((e: { id: string }) => e.id)).not.toEqual(
      expect.arrayContaining(errorIds.slice(0, 1)),
    );
  });

  it('reads a log of the previous layout (its own partition, bodies deflated) by id', async () => {
    const id = '0190a1b2-0000-7000-8000-0000000001d5';
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: `LOG#${id}`,
          sk: 'LOG',
          id,
          created_at: '2024-07-01T00:00:00.000Z',
          method: 'GET',
          endpoint: '/v1/domains',
          response_status: 200,
          user_agent: null,
          api_key_id: 'key_1',
          duration_ms: 3,
          request_body: null,
          response_body: deflateRawSync(JSON.stringify({ object: 'list', data: [] })),
        },
      }),
    );
    expect(await requestLogs.get(id)).toMatchObject({
      id,
      endpoint: '/v1/domains',
      response_body: '{"object":"list","data":[]}',
    });
  });
});

describe("request logs under the stack's privacy settings (requestLogBodies=false, emailRetentionDays=10)", () => {
  /**
   * The real handlers, built from the environment as on Lambda, with what the stack gives the API
   * functions and the writer for `-c requestLogBodies=false -c emailRetentionDays=10`
   * (test/infra/request-logs.test.ts holds the template to it): no bodies, logs kept 10 days.
   */
  const RETENTION_DAYS = 10;
  const env = () => ({
    TABLE_NAME: table.tableName,
    TABLE_LAYOUT: JSON.stringify({ retentionDays: RETENTION_DAYS }),
    AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    RATE_LIMIT_PER_SECOND: '10',
    REQUEST_LOG_BODIES: 'false',
    LOG_RETENTION_DAYS: String(RETENTION_DAYS),
  });
  const email = {
    to: ['alice.private@example.com'],
    subject: 'Your test results',
    html: '<p>Dear Alice, your diagnosis is ready</p>',
  };
  const traces = ['alice.private', 'test results', 'diagnosis', 'a-key-named-bob'];

  it('keeps no body in what the functions log nor in the table, and a TTL within the emails’ retention', async () => {
    for (const [key, value] of Object.entries(env())) vi.stubEnv(key, value);
    const { directRequestLogs } = await import('../../functions/observability/request-log-sink.js');
    directRequestLogs(capture);
    try {
      const { handler: createKeyHandler } = await import('../../functions/handlers/create-api-key.js');
      const { handler: fallbackHandler } = await import('../../functions/handlers/route-not-found.js');
      const { handler: writerHandler } = await import('../../functions/handlers/write-request-logs.js');
      const created = (await createKeyHandler(
        httpEvent({ method: 'POST', path: '/v1/api-keys', token, body: { name: 'a-key-named-bob' } }),
        context(),
      )) as Response;
      expect(created.statusCode).toBe(201);
      const missing = (await fallbackHandler(
        httpEvent({ method: 'POST', path: '/v1/emailz', token, body: email }),
        context(),
      )) as Response;
      expect(missing.statusCode).toBe(404);
      // What the functions wrote to their log groups: the summaries, no body.
      expect(lines).toHaveLength(2);
      for (const line of lines) for (const trace of traces) expect(line).not.toContain(trace);
      const emitted = lines.map((line) => parseRequestLogLine(line) as RequestLogEntry);
      for (const entry of emitted) expect(entry).toMatchObject({ request_body: null, response_body: null });
      expect(emitted.map((e) => e.endpoint)).toEqual(['/v1/api-keys', '/v1/emailz']);

      // A line written with its bodies (an instance still running the old setting), one past its
      // retention (a batch that waited in the retry queue), and today's: through the real writer.
      const before = Date.now();
      const withBodies: RequestLogEntry = {
        ...(emitted[1] as RequestLogEntry),
        id: logIdOf('with-bodies', before - 1000),
        created_at: new Date(before - 1000).toISOString(),
        request_body: JSON.stringify(email),
        response_body: '{"name":"not_found"}',
      };
      const old = { ...withBodies, id: logIdOf('old', before - 11 * 86_400_000) };
      old.created_at = new Date(before - 11 * 86_400_000).toISOString();
      const result = await writerHandler(
        awslogs([...lines, requestLogLine(withBodies), requestLogLine(old)]) as never,
        context('write-request-logs'),
      );
      expect(result).toEqual({ stored: 3, skipped: 0, expired: 1 });

      const items = (await table.db.send(new ScanCommand({ TableName: table.tableName }))).Items ?? [];
      const ours = items.filter((i) => [...emitted, withBodies, old].some((e) => i.sk === `LOG#${e.id}`));
      expect(ours).toHaveLength(3);
      expect(ours.some((i) => i.sk === `LOG#${old.id}`)).toBe(false);
      // Every log item (the API key's own item holds its name, as it should).
      const stored = JSON.stringify(items.filter((i) => String(i.pk).startsWith('LOGS#')));
      for (const trace of traces) expect(stored).not.toContain(trace);
      for (const item of ours) {
        expect(item.z).toBeUndefined();
        const at = Date.parse(logTimeOf(String(item.sk).slice(4))) / 1000;
        // Within the emails' retention: an email made by this request expires no sooner.
        expect(item.expires_at).toBeLessThanOrEqual(Math.ceil(at) + RETENTION_DAYS * 86_400);
        expect(item.expires_at).toBeGreaterThan(at);
      }
      for (const entry of [...emitted, withBodies]) {
        const one = parseBody(await getLog(entry.id));
        expect(one).toMatchObject({ id: entry.id, request_body: null, response_body: null });
      }
    } finally {
      directRequestLogs(undefined);
      vi.unstubAllEnvs();
    }
  });
});
