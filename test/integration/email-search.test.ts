import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_LAYOUT, EmailKeys, SEARCH_SHARDS } from '../../functions/adapters/dynamodb/email-keys.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { EmailListing } from '../../functions/adapters/dynamodb/email-search.js';
import { keys, SEARCH_INDEX } from '../../functions/adapters/dynamodb/table.js';
import type { EmailSummary } from '../../functions/emails/email.js';
import { type ListEmailsQuery, listEmailsQuerySchema } from '../../functions/emails/list-query.js';
import { encodeBase32 } from '../../functions/shared/ids.js';
import { emailContent } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * 40 emails a minute apart: every one Bcc'd to an archive, the even ones to Alice, the odd ones to
 * Bob (Cc Carol); one in three from acme.test; one in four tagged category:welcome; one in three
 * delivered. Every search must answer exactly the emails a filter over all of them would.
 */
const START = Date.parse('2026-11-01T10:00:00Z');
const MINUTE = 60_000;
const emails: {
  id: string;
  at: number;
  to: string[];
  cc: string[];
  bcc: string[];
  from: string;
  tag: boolean;
  status: string;
}[] = [];
let table: TestTable;
let repo: DynamoEmailRepository;

/** An email id created at `ms` (a UUIDv7 of that time), as the service makes them. */
function idAt(ms: number): string {
  const bytes = randomBytes(16);
  let t = ms;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  return `em_${encodeBase32(bytes)}`;
}

beforeAll(async () => {
  table = await startTestTable('t-search');
  repo = new DynamoEmailRepository(table.db, table.tableName, { layout: DEFAULT_LAYOUT });
  for (let i = 0; i < 40; i++) {
    const at = START + i * MINUTE;
    const email = {
      id: idAt(at),
      at,
      to: i % 2 === 0 ? ['Alice <Alice@Example.test>'] : ['bob@example.test'],
      cc: i % 2 === 0 ? [] : ['carol@example.test'],
      bcc: ['archive@acme.test'],
      from: i % 3 === 0 ? 'Acme <news@ACME.test>' : 'someone@other.test',
      tag: i % 4 === 0,
      status: i % 3 === 1 ? 'delivered' : 'queued',
    };
    emails.push(email);
    await repo.create({
      id: email.id,
      created_at: new Date(at).toISOString(),
      content: emailContent({
        from: email.from,
        to: email.to,
        cc: email.cc,
        bcc: email.bcc,
        tags: [
          { name: 'batch', value: String(i) },
          ...(email.tag ? [{ name: 'category', value: 'welcome' }] : []),
        ],
      }),
    });
    if (email.status === 'delivered')
      await repo.finish(email.id, 'delivered', new Date(at + 1000).toISOString());
  }
}, 60_000);
afterAll(() => table.stop());

const q = (given: Record<string, string>): ListEmailsQuery =>
  listEmailsQuerySchema.parse({ limit: '100', ...given }) as ListEmailsQuery;
const idsOf = (page: { data: EmailSummary[] }) => page.data.map(({ id }) => id);
const expected = (keep: (e: (typeof emails)[number]) => boolean) =>
  emails
    .filter(keep)
    .map(({ id }) => id)
    .reverse();

describe('searching emails (dynalite)', () => {
  it('finds by recipient (To, Cc or Bcc; exact, any case), sender domain and tag, each from its index alone', async () => {
    const sent = vi.spyOn(table.db, 'send');
    const cases: [Record<string, string>, (e: (typeof emails)[number]) => boolean][] = [
      [{ recipient: 'ALICE@example.TEST' }, (e) => e.to[0]?.includes('Alice') === true],
      [{ recipient: 'carol@example.test' }, (e) => e.cc.length > 0],
      [{ recipient: 'archive@acme.test' }, () => true],
      [{ recipient: 'alice@example.tes' }, () => false],
      [{ sender_domain: 'Acme.Test' }, (e) => e.from.includes('ACME')],
      [{ tag: 'category:welcome' }, (e) => e.tag],
      [{ tag: 'batch:7' }, (e) => e === emails[7]],
    ];
    for (const [given, keep] of cases) {
      sent.mockClear();
      expect(idsOf(await repo.list(q(given))), JSON.stringify(given)).toEqual(expected(keep));
      const queries = sent.mock.calls.map(([command]) => command).filter((c) => c instanceof QueryCommand);
      // One Query per shard of the term's partitions, in the search index; never a Scan.
      expect(queries.length).toBeGreaterThanOrEqual(SEARCH_SHARDS);
      for (const query of queries) expect(query.input.IndexName).toBe(SEARCH_INDEX.name);
      expect(sent.mock.calls.some(([c]) => c.constructor.name === 'ScanCommand')).toBe(false);
    }
    sent.mockRestore();
  });

  it('takes a date range alone (the time index) and with any filter, both bounds exclusive', async () => {
    const after = new Date(START + 10 * MINUTE).toISOString();
    const before = new Date(START + 30 * MINUTE).toISOString();
    const inRange = (e: (typeof emails)[number]) => e.at > START + 10 * MINUTE && e.at < START + 30 * MINUTE;
    expect(idsOf(await repo.list(q({ created_after: after, created_before: before })))).toEqual(
      expected(inRange),
    );
    expect(idsOf(await repo.list(q({ created_after: after })))).toEqual(
      expected((e) => e.at > START + 10 * MINUTE),
    );
    expect(
      idsOf(
        await repo.list(q({ recipient: 'bob@example.test', created_after: after, created_before: before })),
      ),
    ).toEqual(expected((e) => inRange(e) && e.cc.length > 0));
    expect(idsOf(await repo.list(q({ status: 'delivered', created_before: before })))).toEqual(
      expected((e) => e.status === 'delivered' && e.at < START + 30 * MINUTE),
    );
    // An empty range is an empty page, not DynamoDB's refusal of a reversed BETWEEN.
    expect(await repo.list(q({ created_after: before, created_before: after }))).toEqual({
      data: [],
      has_more: false,
    });
  });

  it('combines filters within the most selective index, with cursors both ways', async () => {
    const given = {
      recipient: 'archive@acme.test',
      sender_domain: 'acme.test',
      status: 'queued',
      tag: 'category:welcome',
    };
    const all = expected((e) => e.from.includes('ACME') && e.status === 'queued' && e.tag);
    expect(all.length).toBeGreaterThan(2);
    expect(idsOf(await repo.list(q(given)))).toEqual(all);
    // Page by page with Resend's cursors: newest first after each last id, then back with before.
    const pages: string[] = [];
    let page = await repo.list({ ...q(given), limit: 1 });
    pages.push(...idsOf(page));
    while (page.has_more) {
      page = await repo.list({ ...q(given), limit: 1, after: pages.at(-1) });
      pages.push(...idsOf(page));
    }
    expect(pages).toEqual(all);
    const back = await repo.list({ ...q(given), limit: 1, before: all.at(-1) });
    expect(idsOf(back)).toEqual([all.at(-2)]);
    expect(back.has_more).toBe(true);
    expect(idsOf(await repo.list({ ...q(given), limit: 2, offset: 1 }))).toEqual(all.slice(1, 3));
  });

  it('reads at most its bound a page, and says where it stopped so the next page goes on from there', async () => {
    const listing = new EmailListing(table.db, table.tableName, new EmailKeys(DEFAULT_LAYOUT), 10);
    const given = q({ recipient: 'archive@acme.test', tag: 'category:welcome' });
    const sent = vi.spyOn(table.db, 'send');
    const first = await listing.list(given);
    const read = sent.mock.calls
      .map(([c]) => c)
      .filter((c) => c instanceof QueryCommand)
      .reduce((n, c) => n + Number((c.input as { Limit?: number }).Limit ?? 0), 0);
    sent.mockRestore();
    expect(read).toBeLessThanOrEqual(10 * SEARCH_SHARDS);
    expect(first.has_more).toBe(true);
    expect(first.scanned_to).toBe(emails[emails.length - 10]?.id);
    const found = idsOf(first);
    let page = first;
    while (page.has_more) {
      page = await listing.list({ ...given, after: page.scanned_to ?? page.data.at(-1)?.id });
      found.push(...idsOf(page));
    }
    expect(found).toEqual(expected((e) => e.tag));
  });

  it('writes the entries with the email, in one shard, expiring with it', async () => {
    const email = emails[12];
    if (!email) throw new Error('no email');
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.email(email.id) },
      }),
    );
    const bySk = Object.fromEntries(Items.map((item) => [String(item.sk), item]));
    const shard = (pk: unknown) => String(pk).slice(-2);
    // The sender's domain on the summary, the first recipient on the body: no item of their own.
    expect(bySk.SUMMARY?.gsi4pk).toMatch(/^SEARCH#from#acme\.test#\d\d$/);
    expect(bySk.BODY?.gsi4pk).toMatch(/^SEARCH#to#alice@example\.test#\d\d$/);
    expect(
      Object.keys(bySk)
        .filter((sk) => sk.startsWith('SEARCH#'))
        .sort(),
    ).toEqual(['SEARCH#tag#batch:12', 'SEARCH#tag#category:welcome', 'SEARCH#to#archive@acme.test']);
    for (const item of Items.filter((i) => i.gsi4pk)) {
      expect(shard(item.gsi4pk)).toBe(shard(bySk.SUMMARY?.gsi4pk));
      expect(item.gsi4sk).toBe(email.id);
      expect(item.expires_at).toBe(bySk.SUMMARY?.expires_at);
    }
  });

  it("moves the search items' expiry with a rescheduled email", async () => {
    const id = idAt(Date.now());
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await repo.create({
      id,
      created_at: new Date().toISOString(),
      content: emailContent({ to: ['a@example.test', 'b@example.test'] }),
      schedule: { at, key_id: 'key_1' },
    } as never);
    const later = new Date(Date.now() + 10 * 86_400_000).toISOString();
    expect(await repo.reschedule(id, later, false)).toBe(true);
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.email(id) },
      }),
    );
    const expiries = new Set(Items.map((i) => i.expires_at));
    const want = Math.ceil((Date.parse(later) + DEFAULT_LAYOUT.retentionDays * 86_400_000) / 1000);
    expect(Items.find((i) => i.sk === 'SEARCH#to#b@example.test')?.expires_at).toBe(want);
    expect(expiries).toEqual(new Set([want]));
  });

  it("extends the search items on a retried reschedule whose first try extended only the status item's expiry", async () => {
    const id = idAt(Date.now());
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await repo.create({
      id,
      created_at: new Date().toISOString(),
      content: emailContent({ to: ['a@example.test', 'b@example.test'] }),
      schedule: { at, key_id: 'key_1' },
    } as never);
    const expiries = async () => {
      const { Items = [] } = await table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.email(id) },
        }),
      );
      return Object.fromEntries(Items.map((i) => [String(i.sk), i.expires_at]));
    };
    const before = await expiries();
    const later = new Date(Date.now() + 10 * 86_400_000).toISOString();
    const want = Math.ceil((Date.parse(later) + DEFAULT_LAYOUT.retentionDays * 86_400_000) / 1000);
    // The first try moves the status item, then fails before extending the rest (its Query refused).
    const failing = new DynamoEmailRepository(
      {
        send: (command: unknown) =>
          command instanceof QueryCommand
            ? Promise.reject(new Error('throttled'))
            : table.db.send(command as never),
      } as never,
      table.tableName,
      { layout: DEFAULT_LAYOUT },
    );
    await expect(failing.reschedule(id, later, false)).rejects.toThrow('throttled');
    const half = await expiries();
    expect(half['SEARCH#to#b@example.test']).toBe(before['SEARCH#to#b@example.test']);
    expect(Object.values(half)).toContain(want);
    // The retry, to the same time, extends everything.
    expect(await repo.reschedule(id, later, false)).toBe(true);
    expect(new Set(Object.values(await expiries()))).toEqual(new Set([want]));
    // The send path's unmarking at the email's own time reads no search item (send-email may not Query).
    const sent: unknown[] = [];
    const watched = new DynamoEmailRepository(
      {
        send: (command: unknown) => {
          sent.push(command);
          return table.db.send(command as never);
        },
      } as never,
      table.tableName,
      { layout: DEFAULT_LAYOUT },
    );
    expect(await watched.reschedule(id, later, false, { unmark: true })).toBe(true);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((command) => command instanceof QueryCommand)).toEqual([]);
  });

  it('refuses filters it cannot serve: a bad address, a tag without a value, a time without a zone', () => {
    for (const bad of [
      { recipient: 'nobody' },
      { tag: 'category' },
      { created_after: '2026-11-01' },
      { created_before: '2026-11-01T10:00:00' },
    ])
      expect(listEmailsQuerySchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});

describe('before the table has its search index (upgrade step 1)', () => {
  it('answers a search 503 that says when it comes, and lists without the filters as before', async () => {
    const listing = new EmailListing(
      table.db,
      table.tableName,
      new EmailKeys({ ...DEFAULT_LAYOUT, searchOff: true }),
    );
    await expect(
      listing.list(listEmailsQuerySchema.parse({ recipient: 'bob@example.test' })),
    ).rejects.toMatchObject({
      statusCode: 503,
      errorName: 'service_unavailable',
      message: expect.stringContaining('upgrade step 2'),
    });
    expect((await listing.list(listEmailsQuerySchema.parse({ limit: '5' }))).data).toHaveLength(5);
  });
});
