import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, TTL_ATTRIBUTE } from '../../functions/adapters/dynamodb/table.js';
import { DynamoWebhookRepository } from '../../functions/adapters/dynamodb/webhook-repository.js';
import type { PageQuery } from '../../functions/shared/list.js';
import {
  messageId,
  newAttemptId,
  type WebhookAttempt,
  type WebhookMessage,
} from '../../functions/webhooks/model.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * One endpoint's 40 messages written three ways in one table: every one in the unsharded partition
 * the versions before sharding wrote (`WEBHOOK#<id>`), spread over 8 shards, and half of each (a
 * table mid-upgrade). Every listing must answer alike.
 */
const SHARDS = 8;
const endpoints = { unsharded: 'wh_unsharded', sharded: 'wh_sharded', mixed: 'wh_mixed' } as const;
let table: TestTable;
let repo: DynamoWebhookRepository;
const ids: string[] = [];

const messageOf = (webhookId: string, id: string, i: number): WebhookMessage => ({
  id,
  webhook_id: webhookId,
  type: 'email.delivered',
  created_at: new Date(Date.parse('2026-11-20T00:00:00.000Z') + i * 1000).toISOString(),
  status: 'success',
  next_attempt_at: null,
  attempts: 1,
  body: `{"n":${i}}`,
});

/** What the versions before sharding wrote: the message (and an attempt) under `WEBHOOK#<id>`. */
async function putLegacy(message: WebhookMessage, attempt?: WebhookAttempt) {
  const pk = keys.webhook(message.webhook_id);
  await table.db.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk, sk: keys.webhookMessage(message.id), ...message, [TTL_ATTRIBUTE]: 1 << 30 },
    }),
  );
  if (attempt)
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk, sk: keys.webhookAttempt(message.id, attempt.id), ...attempt },
      }),
    );
}

beforeAll(async () => {
  table = await startTestTable('t-webhook-shards');
  repo = new DynamoWebhookRepository(table.db, table.tableName, { shards: SHARDS });
  for (let i = 0; i < 40; i++)
    ids.push(
      messageId('wh_any', {
        created_at: new Date(Date.UTC(2026, 10, 20, 0, 0, i)).toISOString(),
        key: `k${i}`,
      }),
    );
  for (const [i, id] of ids.entries()) {
    await putLegacy(messageOf(endpoints.unsharded, id, i));
    await repo.recordAttempt(messageOf(endpoints.sharded, id, i));
    if (i % 2) await putLegacy(messageOf(endpoints.mixed, id, i));
    else await repo.recordAttempt(messageOf(endpoints.mixed, id, i));
  }
}, 60_000);
afterAll(() => table.stop());

const page = (q: Partial<PageQuery>): PageQuery => ({ limit: 10, offset: 0, ...q });

describe("an endpoint's messages over shards and the unsharded partition (dynalite)", () => {
  it('spreads the sharded messages over the shards', async () => {
    const { Items } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.webhook(endpoints.sharded) },
      }),
    );
    expect(Items).toEqual([]);
    const used = new Set<string>();
    for (let s = 0; s < SHARDS; s++) {
      const { Items: inShard } = await table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.webhookShard(endpoints.sharded, keys.shard(s)) },
        }),
      );
      if (inShard?.length) used.add(String(s));
    }
    expect(used.size).toBeGreaterThan(4);
  });

  it('lists alike, unsharded, sharded and mixed: same ids, same order, has_more, offsets and cursors both ways', async () => {
    const newestFirst = [...ids].reverse();
    const queries: PageQuery[] = [
      page({}),
      page({ limit: 1 }),
      page({ limit: 100 }),
      page({ limit: 7, offset: 13 }),
      page({ limit: 5, offset: 35 }),
      page({ limit: 5, offset: 40 }),
      page({ limit: 9, after: newestFirst[10] }),
      page({ limit: 9, before: newestFirst[30] }),
      page({ limit: 3, before: newestFirst[1] }),
      page({ limit: 3, after: newestFirst[39] }),
      page({ limit: 50, after: newestFirst[20] }),
      page({ limit: 50, before: newestFirst[20] }),
    ];
    for (const q of queries) {
      const answers = await Promise.all(Object.values(endpoints).map((id) => repo.listMessages(id, q)));
      const [first, ...rest] = answers.map((a) => ({ ids: a.data.map((m) => m.id), has_more: a.has_more }));
      for (const other of rest) expect(other, JSON.stringify(q)).toEqual(first);
    }
    const all = await repo.listMessages(endpoints.mixed, page({ limit: 100 }));
    expect(all.data.map((m) => m.id)).toEqual(newestFirst);
    expect(all.has_more).toBe(false);
  });

  it('reads one message from its shard, or from the unsharded partition; a message of then attempted since shows its new state once', async () => {
    const [sharded, legacy] = [ids[0] as string, ids[1] as string];
    expect((await repo.getMessage(endpoints.mixed, sharded))?.body).toBe('{"n":0}');
    expect((await repo.getMessage(endpoints.mixed, legacy))?.body).toBe('{"n":1}');
    expect(await repo.getMessage(endpoints.mixed, 'msg_00000000000000000000000000')).toBeNull();

    // A message written before sharding, attempted (or replayed) now: its new state and attempt go to its shard.
    const before: WebhookAttempt = {
      id: newAttemptId(),
      message_id: legacy,
      sent_at: '2026-11-20T00:00:01.000Z',
      http_status_code: 500,
      duration_ms: 10,
      response: 'down',
    };
    await putLegacy({ ...messageOf(endpoints.mixed, legacy, 1), status: 'attempting', attempts: 1 }, before);
    await new Promise((resolve) => setTimeout(resolve, 2));
    const now: WebhookAttempt = { ...before, id: newAttemptId(), http_status_code: 200, response: 'ok' };
    await repo.recordAttempt(
      { ...messageOf(endpoints.mixed, legacy, 1), status: 'success', attempts: 2 },
      now,
    );
    expect(await repo.getMessage(endpoints.mixed, legacy)).toMatchObject({ status: 'success', attempts: 2 });
    const listed = await repo.listMessages(endpoints.mixed, page({ limit: 100 }));
    expect(listed.data.map((m) => m.id)).toEqual([...ids].reverse());
    expect(listed.data.find((m) => m.id === legacy)).toMatchObject({ status: 'success', attempts: 2 });
    const attempts = await repo.listAttempts(endpoints.mixed, legacy, page({}));
    expect(attempts.data.map((a) => a.id)).toEqual([now.id, before.id]);
  });
});
