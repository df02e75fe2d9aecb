/**
 * Parked webhook retries in a real (emulated) table: how they are keyed and spread, what counts as
 * due, removal while reading, and the scheduler's re-queue run over them.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, WEBHOOK_RETRY_SHARDS, webhookRetryShard } from '../../functions/adapters/dynamodb/table.js';
import { DynamoWebhookRetryStore } from '../../functions/adapters/dynamodb/webhook-retry-store.js';
import { emailEvent } from '../../functions/emails/events.js';
import { type Delivery, deliveryFor } from '../../functions/webhooks/model.js';
import type { ParkedRetry } from '../../functions/webhooks/ports.js';
import {
  MAX_REQUEUED_PER_RUN,
  REQUEUE_MARGIN_MS,
  requeueDueRetries,
} from '../../functions/webhooks/retries.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let store: DynamoWebhookRetryStore;
beforeAll(async () => {
  table = await startTestTable();
  store = new DynamoWebhookRetryStore(table.db, table.tableName);
});
afterAll(async () => {
  await table?.stop();
});

const now = Date.parse('2026-11-24T12:00:00.000Z');
let serial = 0;
const retry = (dueInMs: number): ParkedRetry & { delivery: Delivery } => {
  serial++;
  const delivery = {
    ...deliveryFor(
      'wh_down',
      emailEvent(
        'email.delivered',
        new Date(now - 3_600_000 + serial).toISOString(),
        { email_id: `em_${serial}`, from: 'a@b.test', subject: 's', tags: { k: 'v' } },
        ['x@y.test'],
      ),
    ),
    attempts_made: 3,
  };
  return { due_at: new Date(now + dueInMs).toISOString(), message_id: delivery.message_id, delivery };
};

/** Every parked item, shard by shard. */
const parked = async () => {
  const found: Record<string, unknown>[] = [];
  for (let shard = 0; shard < WEBHOOK_RETRY_SHARDS; shard++) {
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.webhookRetry(shard) },
      }),
    );
    found.push(...Items);
  }
  return found;
};

const drain = async (until: string, limit: number) => {
  const seen: ParkedRetry[] = [];
  for await (const page of store.due(until, limit)) seen.push(...page);
  return seen;
};

describe('parked webhook retries', () => {
  it('are keyed WHRETRY#<shard> / <due>#<message id>, spread over the shards, and read back whole', async () => {
    const many = Array.from({ length: 40 }, () => retry(-60_000));
    await Promise.all(many.map((r) => store.park(r)));
    const items = await parked();
    expect(items).toHaveLength(40);
    // 40 ids over 8 shards: several partitions take writes, none takes them all.
    const shards = new Set(items.map((i) => String(i.pk)));
    expect(shards.size).toBeGreaterThanOrEqual(4);
    for (const item of items) {
      expect(String(item.pk)).toMatch(/^WHRETRY#[0-7]$/);
      expect(item.sk).toBe(`${item.due_at}#${item.message_id}`);
    }
    // Parking the same retry again writes the same item.
    await store.park(many[0] as ParkedRetry & { delivery: Delivery });
    expect(await parked()).toHaveLength(40);
    const read = await drain(new Date(now).toISOString(), 1000);
    expect(read.map((r) => r.message_id).sort()).toEqual(many.map((r) => r.message_id).sort());
    expect(read.find((r) => r.message_id === many[0]?.message_id)).toEqual(many[0]);
    await store.remove(read);
    // Removing what is gone already is no error.
    await store.remove(read.slice(0, 3));
    expect(await parked()).toHaveLength(0);
  });

  it('are due at or before the time asked for, not after, to the millisecond', async () => {
    const early = retry(-1);
    const exact = retry(0);
    const late = retry(1);
    for (const r of [early, exact, late]) await store.park(r);
    const read = await drain(new Date(now).toISOString(), 100);
    expect(read.map((r) => r.message_id).sort()).toEqual([early.message_id, exact.message_id].sort());
    await store.remove([early, exact, late]);
  });

  it('are read at most `limit` a run, and removing a page while reading disturbs nothing', async () => {
    // 150 in one shard (more than a page of 100) and some in the others.
    const due: ReturnType<typeof retry>[] = [];
    while (due.filter((r) => webhookRetryShard(r.message_id) === 0).length < 150) {
      const r = retry(-1000);
      if (webhookRetryShard(r.message_id) === 0 || due.length % 10 === 0) due.push(r);
    }
    await Promise.all(due.map((r) => store.park(r)));
    // A run bounded to 80: each shard gives at most its share (10), so no more than 80 in all.
    expect((await drain(new Date(now).toISOString(), 80)).length).toBeLessThanOrEqual(80);
    const seen = new Set<string>();
    for await (const page of store.due(new Date(now).toISOString(), 10_000)) {
      expect(page.length).toBeLessThanOrEqual(100);
      for (const r of page) seen.add(r.message_id);
      await store.remove(page);
    }
    expect(seen.size).toBe(due.length);
    expect(await parked()).toHaveLength(0);
  });

  it('go back on the queue when due, ten a batch, and leave the table; those not due stay', async () => {
    const due = Array.from({ length: 25 }, () => retry(-5000));
    const later = retry(60_000);
    await Promise.all([...due, later].map((r) => store.park(r)));
    const sent: Delivery[][] = [];
    const report = await requeueDueRetries({
      retries: store,
      queue: { enqueue: async (batch) => void sent.push(batch) },
      clock: { now: () => new Date(now) },
    });
    expect(report).toEqual({ requeued: 25, refused: 0, unreadable: 0 });
    expect(sent.every((batch) => batch.length <= 10)).toBe(true);
    expect(
      sent
        .flat()
        .map((d) => d.message_id)
        .sort(),
    ).toEqual(due.map((r) => r.message_id).sort());
    // As parked: the attempts made so far travel with the message.
    expect(sent.flat().every((d) => d.attempts_made === 3)).toBe(true);
    expect((await parked()).map((i) => i.message_id)).toEqual([later.message_id]);
    await store.remove([later]);
  });

  it("are read from the 8 partitions side by side, a run bounded by the invocation's time left", async () => {
    // More than a page (100) in every shard.
    const due: ReturnType<typeof retry>[] = [];
    const inShard = (n: number) => due.filter((r) => webhookRetryShard(r.message_id) === n).length;
    while ([0, 1, 2, 3, 4, 5, 6, 7].some((n) => inShard(n) < 110)) due.push(retry(-1000));
    await Promise.all(due.map((r) => store.park(r)));
    const sent: Delivery[] = [];
    // Time for each partition's first page, then under the margin: one page from each of the 8.
    let asked = 0;
    const report = await requeueDueRetries(
      {
        retries: store,
        queue: { enqueue: async (batch) => void sent.push(...batch) },
        clock: { now: () => new Date(now) },
      },
      MAX_REQUEUED_PER_RUN,
      () => (++asked <= 8 ? 60_000 : REQUEUE_MARGIN_MS - 1),
    );
    expect(report.requeued).toBe(800);
    expect(new Set(sent.map((d) => webhookRetryShard(d.message_id))).size).toBe(8);
    expect(await parked()).toHaveLength(due.length - 800);
    // Unbounded by time, the next run takes the rest.
    const rest = await requeueDueRetries({
      retries: store,
      queue: { enqueue: async () => undefined },
      clock: { now: () => new Date(now) },
    });
    expect(rest.requeued).toBe(due.length - 800);
    expect(await parked()).toHaveLength(0);
  });
});
