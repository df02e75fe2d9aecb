import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoRequestLogRepository } from '../../functions/adapters/dynamodb/request-log-repository.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { makeHandler as makeGetLog } from '../../functions/handlers/get-log.js';
import { makeHandler as makeListLogs } from '../../functions/handlers/list-logs.js';
import { logIdOf, type RequestLogEntry, type RequestLogSink } from '../../functions/request-logs/model.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * GET /v1/logs filtered by our `method`, `path` (a prefix) and `api_key_id`, alone and with
 * `status`, through the real handler against dynalite: every page matches what a filter of all the
 * logs gives, cursors page through all of it, reads are Queries of the logs' partitions bounded by
 * the read bound (never a Scan), and each log names its key.
 */
let table: TestTable;
let apiKeys: DynamoApiKeyRepository;
let token: string;
let sends: { name: string; scanned: number }[] = [];
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const sink: RequestLogSink = { write: () => undefined };
type Response = APIGatewayProxyStructuredResultV2;
type Summary = {
  id: string;
  method: string;
  endpoint: string;
  response_status: number;
  api_key_id: string | null;
  api_key_name: string | null;
};

const METHODS = ['GET', 'POST', 'DELETE'];
const PATHS = ['/v1/emails', '/v1/emails/batch', '/v1/domains', '/v1/emails/em_1/cancel'];
let kept: { id: string; name: string };
let gone: { id: string };
let entries: RequestLogEntry[];

beforeAll(async () => {
  table = await startTestTable();
  // Count what the handler asks of DynamoDB, and how many items each Query evaluated.
  const send = table.db.send.bind(table.db);
  table.db.send = (async (command: unknown, ...rest: unknown[]) => {
    const result = await (send as (c: unknown, ...r: unknown[]) => Promise<{ ScannedCount?: number }>)(
      command,
      ...rest,
    );
    sends.push({ name: (command as object).constructor.name, scanned: result?.ScannedCount ?? 0 });
    return result;
  }) as typeof table.db.send;
  apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  const [first] = (await apiKeys.list({ limit: 10, offset: 0 })).data;
  kept = { id: (first as { id: string }).id, name: (first as { name: string }).name };
  // A second key, deleted after its requests were logged.
  const old = generateApiKey('old ci', 'full_access', new Date()).key;
  await apiKeys.put(old);
  gone = { id: old.id };
  const base = Date.parse('2026-11-01T00:00:00Z');
  entries = Array.from({ length: 48 }, (_, i) => ({
    id: logIdOf(`request-${i}`, base + i * 1000),
    created_at: new Date(base + i * 1000).toISOString(),
    method: METHODS[i % 3] as string,
    endpoint: PATHS[i % 4] as string,
    response_status: i % 5 === 0 ? 422 : 200,
    user_agent: null,
    api_key_id: i % 7 === 0 ? null : i % 2 ? kept.id : gone.id,
    duration_ms: 1,
    request_body: null,
    response_body: null,
  }));
  await new DynamoRequestLogRepository(table.db, table.tableName).put(entries, 30);
  await apiKeys.deleteByHash(old.hash);
});
afterAll(() => table.stop());

const handler = (bound?: number) =>
  makeListLogs({
    apiKeys,
    requestLogs: new DynamoRequestLogRepository(table.db, table.tableName, undefined, bound),
    log,
    requestLog: sink,
  });
const listLogs = async (query: Record<string, string>, bound?: number) => {
  sends = [];
  const response = (await handler(bound)(
    httpEvent({ method: 'GET', path: '/v1/logs', token, query }),
    context(),
  )) as Response;
  return { status: response.statusCode, body: parseBody(response) };
};

/** Every page of a query, following `after` (or `scanned_to`) to the end. */
async function allPages(query: Record<string, string>, bound?: number) {
  const found: Summary[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const { status, body } = await listLogs({ ...query, ...(cursor ? { after: cursor } : {}) }, bound);
    expect(status).toBe(200);
    // Reads: Queries (and the keys' names by id), never a Scan; bounded.
    expect(sends.some((s) => s.name === ScanCommand.name)).toBe(false);
    const scanned = sends.filter((s) => s.name === QueryCommand.name).reduce((sum, s) => sum + s.scanned, 0);
    if (bound !== undefined) expect(scanned).toBeLessThanOrEqual(bound);
    found.push(...body.data);
    if (!body.has_more) return found;
    cursor = body.data.length === Number(query.limit ?? 20) ? body.data.at(-1).id : body.scanned_to;
    expect(cursor).toBeDefined();
  }
  throw new Error('paging did not end in 200 pages');
}

const newestFirst = (list: RequestLogEntry[]) => [...list].sort((a, b) => (a.id < b.id ? 1 : -1));

describe('GET /v1/logs filtered by method, path and key (ours)', () => {
  it.each<[Record<string, string> | (() => Record<string, string>), (e: RequestLogEntry) => boolean]>([
    [{ method: 'post' }, (e: RequestLogEntry) => e.method === 'POST'],
    [{ path: '/v1/emails' }, (e: RequestLogEntry) => e.endpoint.startsWith('/v1/emails')],
    [{ path: '/v1/emails/batch' }, (e: RequestLogEntry) => e.endpoint === '/v1/emails/batch'],
    [() => ({ api_key_id: kept.id }), (e: RequestLogEntry) => e.api_key_id === kept.id],
    [
      () => ({ method: 'GET', path: '/v1/emails', api_key_id: gone.id, status: '2xx' }),
      (e: RequestLogEntry) =>
        e.method === 'GET' &&
        e.endpoint.startsWith('/v1/emails') &&
        e.api_key_id === gone.id &&
        e.response_status < 300,
    ],
    [
      { method: 'DELETE', status: '4xx' },
      (e: RequestLogEntry) => e.method === 'DELETE' && e.response_status === 422,
    ],
  ])('%o pages through exactly the matching logs, newest first', async (filter, matches) => {
    const query = typeof filter === 'function' ? filter() : filter;
    const expected = newestFirst(entries.filter(matches)).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(0);
    const found = await allPages({ ...query, limit: '10' });
    expect(found.map((e) => e.id)).toEqual(expected);
  });

  it('pages back toward newer logs with before', async () => {
    const expected = newestFirst(entries.filter((e) => e.method === 'POST')).map((e) => e.id);
    const { body } = await listLogs({ method: 'POST', before: expected[8] as string, limit: '3' });
    expect(body.data.map((e: Summary) => e.id)).toEqual(expected.slice(5, 8));
    expect(body.has_more).toBe(true);
  });

  it('stops a page at its read bound, says where (scanned_to), and reading on from there finds every match', async () => {
    const matches = (e: RequestLogEntry) => e.method === 'DELETE' && e.endpoint === '/v1/domains';
    const expected = newestFirst(entries.filter(matches)).map((e) => e.id);
    // 32 logs a page at most (2 a partition), against 48 logs of which 4 match.
    const first = await listLogs({ method: 'DELETE', path: '/v1/domains', limit: '20' }, 32);
    expect(first.body).toMatchObject({ has_more: true, scanned_to: expect.any(String) });
    expect(first.body.data.length).toBeLessThan(expected.length);
    const found = await allPages({ method: 'DELETE', path: '/v1/domains', limit: '20' }, 32);
    expect(found.map((e) => e.id)).toEqual(expected);
    // Unbounded (the default bound is far past 48 logs), one page holds them all.
    const whole = await listLogs({ method: 'DELETE', path: '/v1/domains', limit: '20' });
    expect(whole.body.data.map((e: Summary) => e.id)).toEqual(expected);
    expect(whole.body).toMatchObject({ has_more: false });
    expect(whole.body.scanned_to).toBeUndefined();
  });

  it('refuses a bad filter with 400', async () => {
    for (const query of [{ method: 'FETCH' }, { path: 'v1/emails' }, { api_key_id: '' }] as Record<
      string,
      string
    >[]) {
      const { status, body } = await listLogs(query);
      expect(status).toBe(400);
      expect(body.message).toMatch(/method|path|api_key_id/);
    }
  });
});

describe('a log names its key (api_key_name, ours)', () => {
  it("the key's name now; null for a key deleted since and for a request without a key", async () => {
    const { body } = await listLogs({ limit: '100' });
    const byId = new Map<string, Summary>(body.data.map((e: Summary) => [e.id, e]));
    for (const entry of entries) {
      const shown = byId.get(entry.id);
      expect(shown?.api_key_id).toBe(entry.api_key_id);
      expect(shown?.api_key_name).toBe(entry.api_key_id === kept.id ? kept.name : null);
    }
    const one = entries.find((e) => e.api_key_id === kept.id) as RequestLogEntry;
    const response = (await makeGetLog({
      apiKeys,
      requestLogs: new DynamoRequestLogRepository(table.db, table.tableName),
      log,
      requestLog: sink,
    })(
      httpEvent({
        method: 'GET',
        path: `/v1/logs/${one.id}`,
        routeKey: 'GET /v1/logs/{id}',
        token,
        pathParameters: { id: one.id },
      }),
      context(),
    )) as Response;
    expect(parseBody(response)).toMatchObject({ id: one.id, api_key_id: kept.id, api_key_name: kept.name });
  });
});
