import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { EmailKeys } from '../../functions/adapters/dynamodb/email-keys.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { newEmailId } from '../../functions/shared/ids.js';
import type { PageQuery } from '../../functions/shared/list.js';
import { readBound } from '../../functions/shared/sorted-merge.js';
import { emailContent, storeDomain } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
beforeAll(async () => {
  table = await startTestTable();
});
afterAll(() => table.stop());

type Lister = (query: PageQuery) => Promise<{ data: { id: string }[]; has_more: boolean }>;
const page = (limit: number, cursor: { after?: string; before?: string } = {}): PageQuery => ({
  limit,
  offset: 0,
  ...cursor,
});

/** Walks every page with `after`, then back with `before`; both must see every item once, in order. */
async function walk(list: Lister, newestFirst: string[], limit: number) {
  const forward: string[][] = [];
  let next = await list(page(limit));
  forward.push(next.data.map((item) => item.id));
  while (next.has_more) {
    next = await list(page(limit, { after: forward.at(-1)?.at(-1) }));
    forward.push(next.data.map((item) => item.id));
  }
  expect(forward.flat()).toEqual(newestFirst);
  expect(forward.length).toBeGreaterThanOrEqual(3);
  // Back from the oldest item: the pages before it, nearest first, each newest first.
  const backward: string[][] = [];
  let previous = await list(page(limit, { before: newestFirst.at(-1) }));
  backward.push(previous.data.map((item) => item.id));
  while (previous.has_more) {
    previous = await list(page(limit, { before: backward.at(-1)?.[0] }));
    backward.push(previous.data.map((item) => item.id));
  }
  expect(backward.reverse().flat()).toEqual(newestFirst.slice(0, -1));
  // The ends: nothing after the oldest, nothing before the newest.
  expect(await list(page(limit, { after: newestFirst.at(-1) }))).toEqual({ data: [], has_more: false });
  expect(await list(page(limit, { before: newestFirst[0] }))).toEqual({ data: [], has_more: false });
}

describe('cursor pages (after, before) over the single table', () => {
  it('emails: every page, both ways, alone and with a status filter; deleted cursors still place the page', async () => {
    const emails = new DynamoEmailRepository(table.db, table.tableName);
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) {
      const id = newEmailId();
      await emails.create({
        id,
        created_at: new Date().toISOString(),
        content: emailContent({ subject: `n${i}` }),
      });
      ids.push(id);
      if (i % 2 === 0) await emails.finish(id, 'delivered', new Date().toISOString());
    }
    const newestFirst = [...ids].reverse();
    await walk((q) => emails.list(q), newestFirst, 3);
    const delivered = newestFirst.filter((id) => ids.indexOf(id) % 2 === 0);
    await walk((q) => emails.list({ ...q, status: 'delivered' }), delivered, 2);
    // A cursor need not be a listed item any more: an id between two emails places the page there.
    const between = newEmailId(); // newer than all of them
    expect((await emails.list(page(2, { after: between }))).data.map((e) => e.id)).toEqual(
      newestFirst.slice(0, 2),
    );
  });

  it('domains and API keys: every page, both ways', async () => {
    const domains = new DynamoDomainRepository(table.db, table.tableName);
    const domainIds: string[] = [];
    for (let i = 0; i < 7; i++)
      domainIds.push((await storeDomain(domains, `d${i}.example.com`, 'pending')).id);
    await walk((q) => domains.list(q), [...domainIds].reverse(), 2);

    const keys = new DynamoApiKeyRepository(table.db, table.tableName);
    const keyIds: string[] = [];
    for (let i = 0; i < 7; i++) {
      const { key } = generateApiKey(`k${i}`, 'full_access', new Date());
      await keys.put(key);
      keyIds.push(key.id);
    }
    await walk((q) => keys.list(q), [...keyIds].reverse(), 3);
  });

  it('a cursor page costs the same however deep: about one page from each shard, never the skipped items', async () => {
    const emails = new DynamoEmailRepository(table.db, table.tableName);
    const all = (await emails.list(page(100))).data.map((e) => e.id);
    const partitions = new EmailKeys().timePartitions().length;
    const cost = async (after: string) => {
      const spy = vi.spyOn(table.db, 'send');
      try {
        await emails.list(page(2, { after }));
        const queries = spy.mock.calls.map(([command]) => command).filter((c) => c instanceof QueryCommand);
        const results = await Promise.all(
          spy.mock.results
            .filter((_, i) => spy.mock.calls[i]?.[0] instanceof QueryCommand)
            .map((r) => r.value),
        );
        const read = results.reduce((n, r) => n + ((r as { Items?: unknown[] }).Items?.length ?? 0), 0);
        return { queries: queries.length, read };
      } finally {
        spy.mockRestore();
      }
    };
    const shallow = await cost(all[1] as string);
    const deep = await cost(all.at(-3) as string);
    // Each shard read once (a shard holding more than its share of the page is read on).
    expect(deep.queries).toBeGreaterThanOrEqual(partitions);
    expect(deep.queries).toBeLessThanOrEqual(2 * partitions);
    // The page, the item after it and the cursor: 4 entries, and at most a chunk left over per shard.
    expect(deep.read).toBeLessThanOrEqual(readBound(4, partitions));
    expect(shallow.read).toBeLessThanOrEqual(readBound(4, partitions));
  });
});
