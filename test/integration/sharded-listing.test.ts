import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_LAYOUT, type TableLayout } from '../../functions/adapters/dynamodb/email-keys.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSuppressionRepository } from '../../functions/adapters/dynamodb/suppression-repository.js';
import { DynamoSweepStore } from '../../functions/adapters/dynamodb/sweep-store.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import type { ListEmailsQuery } from '../../functions/emails/list-query.js';
import type { EmailStatus } from '../../functions/emails/status.js';
import { emailIdAt, FIRST_EMAIL_ID, newEmailId } from '../../functions/shared/ids.js';
import { readBound } from '../../functions/shared/sorted-merge.js';
import { newSuppressionId } from '../../functions/suppressions/model.js';
import { emailContent } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * The same 60 emails (some delivered, some bounced, some queued) in three tables: sharded over 8,
 * unsharded as the versions before sharding wrote them, and half of each (a table mid-upgrade).
 * Every listing must answer alike in all three.
 */
const layouts: Record<string, TableLayout> = {
  sharded: { ...DEFAULT_LAYOUT, shards: 8 },
  unsharded: { ...DEFAULT_LAYOUT, shards: 8 },
  mixed: { ...DEFAULT_LAYOUT, shards: 8 },
};
const tables: Record<string, TestTable> = {};
const repos: Record<string, DynamoEmailRepository> = {};
const ids: string[] = [];
const statusOf = new Map<string, EmailStatus>();

/** What the versions before sharding wrote: the unsharded partitions. */
async function unshard(table: TestTable, id: string, status: EmailStatus) {
  await table.db.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: keys.email(id), sk: keys.status },
      UpdateExpression: 'SET gsi1pk = :all, gsi2pk = :status',
      ExpressionAttributeValues: { ':all': keys.allEmails, ':status': keys.emailsWithStatus(status) },
    }),
  );
}

beforeAll(async () => {
  const start = Date.now() - 3_600_000;
  for (let i = 0; i < 60; i++) ids.push(newEmailId());
  for (const [name, layout] of Object.entries(layouts)) {
    tables[name] = await startTestTable(`t-${name}`);
    repos[name] = new DynamoEmailRepository((tables[name] as TestTable).db, `t-${name}`, { layout });
  }
  for (const [i, id] of ids.entries()) {
    const status: EmailStatus = i % 3 === 0 ? 'delivered' : i % 5 === 0 ? 'bounced' : 'queued';
    statusOf.set(id, status);
    for (const [name, repo] of Object.entries(repos)) {
      await repo.create({
        id,
        created_at: new Date(start + i * 1000).toISOString(),
        content: emailContent({ subject: `#${i}` }),
      });
      if (status !== 'queued') await repo.finish(id, status, new Date().toISOString());
      if (name === 'unsharded' || (name === 'mixed' && i % 2 === 0))
        await unshard(tables[name] as TestTable, id, status);
    }
  }
}, 60_000);
afterAll(() => Promise.all(Object.values(tables).map((t) => t.stop())));

const query = (q: Partial<ListEmailsQuery>): ListEmailsQuery => ({ limit: 20, offset: 0, ...q });

describe('listing emails from sharded and unsharded tables (dynalite)', () => {
  it('answers every page alike: offsets, limits, cursors both ways, and each status', async () => {
    const newestFirst = [...ids].reverse();
    const queries: ListEmailsQuery[] = [
      query({}),
      query({ limit: 1 }),
      query({ limit: 100 }),
      query({ limit: 7, offset: 13 }),
      query({ limit: 5, offset: 58 }),
      query({ limit: 5, offset: 60 }),
      query({ limit: 9, after: newestFirst[10] }),
      query({ limit: 9, before: newestFirst[50] }),
      query({ limit: 3, before: newestFirst[1] }),
      query({ limit: 3, after: newestFirst[59] }),
      // Cursors that are no email's (between two, or past every one).
      query({ limit: 4, after: emailIdAt(Date.now() + 60_000) }),
      query({ limit: 4, before: emailIdAt(Date.now() - 86_400_000) }),
      ...(['queued', 'delivered', 'bounced', 'failed'] as const).flatMap((status) => [
        query({ status }),
        query({ status, limit: 4, offset: 3 }),
        query({ status, limit: 2, after: newestFirst[20] }),
        query({ status, limit: 2, before: newestFirst[40] }),
      ]),
    ];
    for (const q of queries) {
      const answers = await Promise.all(Object.values(repos).map((repo) => repo.list(q)));
      const [first, ...rest] = answers.map((a) => ({ ids: a.data.map((e) => e.id), has_more: a.has_more }));
      for (const other of rest) expect(other, JSON.stringify(q)).toEqual(first);
    }
    // And they are the right ones.
    const all = await repos.sharded?.list(query({ limit: 100 }));
    expect(all?.data.map((e) => e.id)).toEqual(newestFirst);
    const delivered = await repos.mixed?.list(query({ status: 'delivered', limit: 100 }));
    expect(delivered?.data.map((e) => e.id)).toEqual(
      newestFirst.filter((id) => statusOf.get(id) === 'delivered'),
    );
    expect(delivered?.data.every((e) => e.status === 'delivered')).toBe(true);
  });

  it('reads at most its stated bound of index entries per page, however deep the offset', async () => {
    const table = tables.sharded as TestTable;
    const spy = vi.spyOn(table.db, 'send');
    try {
      for (const q of [
        query({ limit: 20 }),
        query({ limit: 10, offset: 40 }),
        query({ limit: 3, after: ids[30] }),
      ]) {
        spy.mockClear();
        await repos.sharded?.list(q);
        const results = await Promise.all(
          spy.mock.calls.flatMap(([command], i) =>
            command instanceof QueryCommand ? [spy.mock.results[i]?.value] : [],
          ),
        );
        const read = results.reduce((n, r) => n + ((r as { Items?: unknown[] }).Items?.length ?? 0), 0);
        // The page, the entry after it, the cursor entry; over 8 shards and the unsharded partition.
        const wanted = q.offset + q.limit + 1 + (q.after ? 1 : 0);
        expect(read, JSON.stringify(q)).toBeLessThanOrEqual(readBound(wanted, 9));
        expect(read).toBeGreaterThanOrEqual(Math.min(wanted, ids.length) - (q.after ? 1 : 0));
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('has the sweeper find the same queued emails, oldest first, in every table', async () => {
    const queued = ids.filter((id) => statusOf.get(id) === 'queued');
    for (const [name, table] of Object.entries(tables)) {
      const store = new DynamoSweepStore(table.db, table.tableName, layouts[name]);
      expect(await store.queuedIds(FIRST_EMAIL_ID, emailIdAt(Date.now() + 1), 1000), name).toEqual(queued);
      expect(await store.queuedIds(queued[3] as string, emailIdAt(Date.now() + 1), 5), name).toEqual(
        queued.slice(3, 8),
      );
    }
  });

  it('keeps suppressions listed exactly through the keys-only time index', async () => {
    const table = tables.sharded as TestTable;
    const suppressions = new DynamoSuppressionRepository(table.db, table.tableName, layouts.sharded);
    const added: string[] = [];
    for (let i = 0; i < 7; i++) {
      const entry = {
        id: newSuppressionId(),
        email: `s${i}@example.com`,
        origin: i % 2 ? ('bounce' as const) : ('manual' as const),
        created_at: new Date().toISOString(),
      };
      await suppressions.add(entry as never);
      added.push(entry.id);
    }
    const listed = await suppressions.list({ limit: 100, offset: 0 });
    expect(listed.data.map((s) => s.id)).toEqual([...added].reverse());
    expect((await suppressions.list({ limit: 100, offset: 0, origin: 'bounce' })).data).toHaveLength(3);
    expect((await suppressions.get(added[2] as string))?.email).toBe('s2@example.com');
  });
});
