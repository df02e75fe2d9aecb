/**
 * The request logs of the previous layout (each its own item `LOG#<id>`, listed through the time
 * and status indexes) after an upgrade: all written before any log of this layout, they are
 * listed after them, newest first, in the unfiltered list and under `2xx`, page after page with
 * cursors both ways and with offsets, until their TTL takes them.
 */
import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRequestLogRepository } from '../../functions/adapters/dynamodb/request-log-repository.js';
import { INDEXES, keys, LOG_SHARDS, shardOf } from '../../functions/adapters/dynamodb/table.js';
import type { RequestLogEntry } from '../../functions/request-logs/model.js';
import { uuidV7Of } from '../../functions/shared/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let logs: DynamoRequestLogRepository;
const T0 = Date.parse('2026-11-01T00:00:00.000Z');

const entry = (atMs: number, status: number): RequestLogEntry => ({
  id: uuidV7Of(atMs, randomBytes(16)),
  created_at: new Date(atMs).toISOString(),
  method: 'POST',
  endpoint: '/v1/emails',
  response_status: status,
  user_agent: null,
  api_key_id: 'key_1',
  duration_ms: 5,
  request_body: '{"to":"a@b.test"}',
  response_body: '{"id":"em_1"}',
});

/** A log as the previous layout wrote it: its own item, in the time index and the status index. */
const putLegacy = async (log: RequestLogEntry) => {
  const shard = shardOf(log.id, LOG_SHARDS);
  const statusClass = `${Math.floor(log.response_status / 100)}xx`;
  await table.db.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: keys.log(log.id),
        sk: keys.logSk,
        [INDEXES.emailsByTime.partitionKey]: keys.logs(shard),
        [INDEXES.emailsByTime.sortKey]: keys.logListed(log.id),
        [INDEXES.emailsByStatus.partitionKey]: keys.logsWithStatus(statusClass, shard),
        [INDEXES.emailsByStatus.sortKey]: keys.logListed(log.id),
        ...log,
        request_body: null,
        response_body: null,
      },
    }),
  );
};

// Five of the previous layout (one of them an error), then four of this one (one an error).
const legacy = [0, 1, 2, 3, 4].map((i) => entry(T0 + i * 1000, i === 2 ? 422 : 200));
const current = [0, 1, 2, 3].map((i) => entry(T0 + 86_400_000 + i * 1000, i === 1 ? 500 : 200));
const newestFirst = (list: RequestLogEntry[]) => [...list].reverse().map((log) => log.id);

beforeAll(async () => {
  table = await startTestTable();
  logs = new DynamoRequestLogRepository(table.db, table.tableName);
  for (const log of legacy) await putLegacy(log);
  await logs.put(current, 30);
});
afterAll(() => table?.stop());

/** Every page of a list, walking `after` (older) from the first. */
async function walk(status: '2xx' | undefined, limit: number) {
  const ids: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = await logs.list({
      limit,
      offset: 0,
      ...(after ? { after } : {}),
      ...(status ? { status } : {}),
    });
    ids.push(...page.data.map((log) => log.id));
    if (!page.has_more) return ids;
    after = page.data.at(-1)?.id;
  }
  throw new Error('no end to the pages');
}

describe('request logs of the previous layout', () => {
  it('are listed after this layout’s, newest first, page after page', async () => {
    const all = [...newestFirst(current), ...newestFirst(legacy)];
    expect(await walk(undefined, 100)).toEqual(all);
    expect(await walk(undefined, 3)).toEqual(all);
    expect(await walk(undefined, 1)).toEqual(all);
    // Offsets across the seam.
    const page = await logs.list({ limit: 3, offset: 3 });
    expect(page.data.map((log) => log.id)).toEqual(all.slice(3, 6));
    expect(page.has_more).toBe(true);
    const last = await logs.list({ limit: 5, offset: 6 });
    expect(last.data.map((log) => log.id)).toEqual(all.slice(6));
    expect(last.has_more).toBe(false);
  });

  it('are listed under 2xx after this layout’s 2xx ones, the errors of both under their class', async () => {
    const ok = (list: RequestLogEntry[]) => newestFirst(list.filter((log) => log.response_status < 300));
    expect(await walk('2xx', 2)).toEqual([...ok(current), ...ok(legacy)]);
    const errors = await logs.list({ limit: 10, offset: 0, status: '4xx' });
    expect(errors.data.map((log) => log.id)).toEqual([legacy[2]?.id]);
  });

  it('page toward newer logs from one of them, into this layout’s', async () => {
    const all = [...newestFirst(current), ...newestFirst(legacy)];
    // Before the oldest: the three just newer than it (all of the previous layout), more beyond.
    const oldest = all.at(-1) as string;
    const newer = await logs.list({ limit: 3, offset: 0, before: oldest });
    expect(newer.data.map((log) => log.id)).toEqual(all.slice(-4, -1));
    expect(newer.has_more).toBe(true);
    // Before the newest of the previous layout: this layout's, the closest ones.
    const seam = newestFirst(legacy)[0] as string;
    const across = await logs.list({ limit: 2, offset: 0, before: seam });
    expect(across.data.map((log) => log.id)).toEqual(newestFirst(current).slice(-2));
    expect(across.has_more).toBe(true);
    const everything = await logs.list({ limit: 10, offset: 0, before: oldest });
    expect(everything.data.map((log) => log.id)).toEqual(all.slice(0, -1));
    expect(everything.has_more).toBe(false);
    // And from one of this layout's, as before.
    const fromCurrent = await logs.list({ limit: 10, offset: 0, before: newestFirst(current)[2] as string });
    expect(fromCurrent.data.map((log) => log.id)).toEqual(newestFirst(current).slice(0, 2));
  });
});
