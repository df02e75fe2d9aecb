/**
 * A broadcast's tally (issue 41) against dynalite: each recipient type kept once per email, opens
 * and clicks counted, unique clicks by the first-click mark per recipient and link, totals summed
 * over their shards, and the recipients' pages (by address, the `email` filter reading one shard).
 */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoBroadcastRecipientReads } from '../../functions/adapters/dynamodb/broadcast-recipients.js';
import { DynamoBroadcastTally, recipientShard } from '../../functions/adapters/dynamodb/broadcast-tally.js';
import { BROADCAST_TOTAL_SHARDS, keys, shardOf } from '../../functions/adapters/dynamodb/table.js';
import type { BroadcastTallyEntry } from '../../functions/emails/broadcast-tally.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let tally: DynamoBroadcastTally;
let reads: DynamoBroadcastRecipientReads;

beforeAll(async () => {
  table = await startTestTable();
  tally = new DynamoBroadcastTally(table.db, table.tableName, 30);
  reads = new DynamoBroadcastRecipientReads(table.db, table.tableName);
});
afterAll(() => table.stop());

const AT = '2026-11-28T12:00:00.000Z';
const entry = (
  broadcastId: string,
  emailId: string,
  address: string,
  type: BroadcastTallyEntry['type'],
  more: Partial<BroadcastTallyEntry> = {},
): BroadcastTallyEntry => ({ broadcastId, emailId, address, type, at: AT, ...more });

const all = async (broadcastId: string, type: BroadcastTallyEntry['type'], more = {}) =>
  (await reads.recipients(broadcastId, type, { limit: 100, ...more })).rows;

describe('the tally', () => {
  it("writes an outcome's item and its count together: a failed write leaves neither, and made again it counts once", async () => {
    const b = newUuid();
    const e = newEmailId();
    let refuse = true;
    // The table refusing the first transaction (a throttle, a network error), then taking them.
    const flaky = {
      send: (command: { constructor: { name: string } }) => {
        if (refuse && command.constructor.name === 'TransactWriteCommand') {
          refuse = false;
          return Promise.reject(
            Object.assign(new Error('Throughput exceeds the limit'), { name: 'ThrottlingException' }),
          );
        }
        return table.db.send(command as never);
      },
    } as unknown as typeof table.db;
    const shaky = new DynamoBroadcastTally(flaky, table.tableName, 30);
    await expect(shaky.record(entry(b, e, 'zoe@example.com', 'sent'))).rejects.toThrow(/Throughput/);
    expect(await all(b, 'sent')).toEqual([]);
    expect((await shaky.totals(b)).sent).toBe(0);
    await shaky.record(entry(b, e, 'zoe@example.com', 'sent'));
    await shaky.record(entry(b, e, 'zoe@example.com', 'sent'));
    expect((await all(b, 'sent')).map((r) => r.email)).toEqual(['zoe@example.com']);
    expect((await shaky.totals(b)).sent).toBe(1);
  });

  it('keeps each outcome once per email, however often it is raised', async () => {
    const b = newUuid();
    const [e1, e2] = [newEmailId(), newEmailId()];
    for (const type of ['sent', 'delivered', 'complained', 'unsubscribed', 'suppressed'] as const) {
      await tally.record(entry(b, e1, 'Ann@Example.com', type));
      await tally.record(entry(b, e1, 'ann@example.com', type));
    }
    await tally.record(entry(b, e2, 'bob@example.com', 'sent'));
    await tally.record(entry(b, e2, 'bob@example.com', 'bounced', { bounceType: 'permanent' }));
    await tally.ended({
      broadcastId: b,
      emailId: newEmailId(),
      address: 'c@example.com',
      at: AT,
      reason: 'failed',
    });
    expect(await tally.totals(b)).toEqual({
      sent: 2,
      delivered: 1,
      opened: 0,
      unique_opened: 0,
      clicked: 0,
      unique_clicked: 0,
      bounced: 1,
      complained: 1,
      unsubscribed: 1,
      suppressed: 1,
      ended: 1,
    });
    expect((await all(b, 'sent')).map((r) => [r.email, r.email_id])).toEqual([
      ['ann@example.com', e1],
      ['bob@example.com', e2],
    ]);
    expect(await all(b, 'bounced')).toMatchObject([{ email: 'bob@example.com', bounce_type: 'permanent' }]);
    expect(await all(b, 'bounced', { bounce_type: 'transient' })).toEqual([]);
    // Another broadcast's tally is its own.
    expect((await tally.totals(newUuid())).sent).toBe(0);
  });

  it('counts every open, and a recipient once among the unique', async () => {
    const b = newUuid();
    const [e1, e2] = [newEmailId(), newEmailId()];
    await tally.record(entry(b, e1, 'ann@example.com', 'opened'));
    await tally.record(entry(b, e1, 'ann@example.com', 'opened', { at: '2026-11-28T13:00:00.000Z' }));
    await tally.record(entry(b, e2, 'bob@example.com', 'opened'));
    const totals = await tally.totals(b);
    expect([totals.opened, totals.unique_opened]).toEqual([3, 2]);
    expect(await all(b, 'opened')).toMatchObject([
      { email: 'ann@example.com', count: 2, at: AT },
      { email: 'bob@example.com', count: 1 },
    ]);
  });

  it('counts clicks per link and recipient; unique clicks by the first-click mark', async () => {
    const b = newUuid();
    const [e1, e2] = [newEmailId(), newEmailId()];
    const click = (emailId: string, address: string, link: string) =>
      tally.record(entry(b, emailId, address, 'clicked', { link }));
    await click(e1, 'ann@example.com', 'https://example.com/a');
    await click(e1, 'ann@example.com', 'https://example.com/a');
    await click(e1, 'ann@example.com', 'https://example.com/b');
    await click(e2, 'bob@example.com', 'https://example.com/a');
    const totals = await tally.totals(b);
    expect([totals.clicked, totals.unique_clicked]).toEqual([4, 2]);
    const [ann, bob] = await all(b, 'clicked');
    expect(ann?.count).toBe(3);
    expect(ann?.links?.sort((x, y) => x.url.localeCompare(y.url))).toEqual([
      { url: 'https://example.com/a', clicks: 2 },
      { url: 'https://example.com/b', clicks: 1 },
    ]);
    expect(bob).toMatchObject({ count: 1, links: [{ url: 'https://example.com/a', clicks: 1 }] });
    const links = (await reads.clickedLinks(b, { limit: 10 })).rows;
    expect(
      links
        .map(({ url, clicks, unique_clicks }) => ({ url, clicks, unique_clicks }))
        .sort((x, y) => x.url.localeCompare(y.url)),
    ).toEqual([
      { url: 'https://example.com/a', clicks: 3, unique_clicks: 2 },
      { url: 'https://example.com/b', clicks: 1, unique_clicks: 1 },
    ]);
  });

  it('keeps first clicks of several links made at once', async () => {
    const b = newUuid();
    const e1 = newEmailId();
    const urls = Array.from({ length: 6 }, (_, i) => `https://example.com/${i}`);
    await Promise.all(urls.map((link) => tally.record(entry(b, e1, 'ann@example.com', 'clicked', { link }))));
    const [ann] = await all(b, 'clicked');
    expect(ann?.count).toBe(6);
    expect(ann?.links).toHaveLength(6);
    const totals = await tally.totals(b);
    expect([totals.clicked, totals.unique_clicked]).toEqual([6, 1]);
  });

  it('spreads the totals over their shards and sums them at read', async () => {
    const b = newUuid();
    const ids = Array.from({ length: 40 }, () => newEmailId());
    await Promise.all(ids.map((id, i) => tally.record(entry(b, id, `r${i}@example.com`, 'sent'))));
    // Each shard a partition of its own: the broadcast's counting is not one partition's 1,000 writes a second.
    const found = await Promise.all(
      Array.from({ length: BROADCAST_TOTAL_SHARDS }, (_, shard) =>
        table.db.send(
          new QueryCommand({
            TableName: table.tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': keys.broadcastTotals(b, shard) },
          }),
        ),
      ),
    );
    const used = new Set(ids.map((id) => shardOf(id, BROADCAST_TOTAL_SHARDS)));
    expect(found.filter(({ Items = [] }) => Items.length === 1)).toHaveLength(used.size);
    expect(used.size).toBeGreaterThan(1);
    expect((await tally.totals(b)).sent).toBe(40);
  });

  it('gives each recipient item the email retention', async () => {
    const b = newUuid();
    const id = newEmailId();
    await tally.record(entry(b, id, 'ann@example.com', 'delivered'));
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: {
          ':pk': keys.broadcastRecipients(b, 'delivered', recipientShard('ann@example.com')),
        },
      }),
    );
    const expires = Items[0]?.expires_at as number;
    expect(expires * 1000 - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(expires * 1000 - Date.now()).toBeLessThan(31 * 86_400_000);
  });
});

describe('the recipients pages', () => {
  const b = newUuid();
  const addresses = Array.from({ length: 45 }, (_, i) => `user${String(i).padStart(2, '0')}@example.com`);
  beforeAll(async () => {
    await Promise.all(addresses.map((a) => tally.record(entry(b, newEmailId(), a, 'delivered'))));
  });

  it('pages through every recipient by address, forwards and back, over the shards', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    const positions: string[] = [];
    for (;;) {
      const page = await reads.recipients(b, 'delivered', { limit: 10, ...(after ? { after } : {}) });
      seen.push(...page.rows.map((r) => r.email));
      positions.push(...page.rows.map((r) => r.position));
      if (!page.has_more) break;
      after = page.rows.at(-1)?.position;
    }
    expect(seen).toEqual(addresses);
    const back = await reads.recipients(b, 'delivered', { limit: 10, before: positions[25] as string });
    expect(back.rows.map((r) => r.email)).toEqual(addresses.slice(15, 25));
    expect(back.has_more).toBe(true);
    const first = await reads.recipients(b, 'delivered', { limit: 10, before: positions[5] as string });
    expect(first.rows.map((r) => r.email)).toEqual(addresses.slice(0, 5));
    expect(first.has_more).toBe(false);
  });

  it('filters by address, reading its shard only', async () => {
    const sent: string[] = [];
    const db = {
      send: (command: QueryCommand) => {
        sent.push(String(command.input.ExpressionAttributeValues?.[':pk']));
        return table.db.send(command);
      },
    } as unknown as typeof table.db;
    const page = await new DynamoBroadcastRecipientReads(db, table.tableName).recipients(b, 'delivered', {
      limit: 10,
      email: 'user07@example.com',
    });
    expect(page.rows.map((r) => r.email)).toEqual(['user07@example.com']);
    expect(new Set(sent)).toEqual(
      new Set([keys.broadcastRecipients(b, 'delivered', recipientShard('user07@example.com'))]),
    );
    // Another address of the same shard is not taken for it (the prefix ends at the address).
    expect((await reads.recipients(b, 'delivered', { limit: 10, email: 'user0@example.com' })).rows).toEqual(
      [],
    );
  });

  it('knows whether a broadcast exists', async () => {
    const id = newUuid();
    expect(await reads.exists(id)).toBe(false);
    await table.db.send(
      new PutCommand({ TableName: table.tableName, Item: { pk: keys.broadcasts, sk: keys.broadcast(id) } }),
    );
    expect(await reads.exists(id)).toBe(true);
  });
});
