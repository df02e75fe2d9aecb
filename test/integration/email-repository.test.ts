import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import type { EmailContent } from '../../functions/core/email.js';
import { newEmailId } from '../../functions/core/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repo: DynamoEmailRepository;
beforeAll(async () => {
  table = await startTestTable();
  repo = new DynamoEmailRepository(table.db, table.tableName);
});
afterAll(() => table.stop());

const content = (over: Partial<EmailContent> = {}): EmailContent => ({
  from: 'hello@acme.com',
  to: ['a@example.com'],
  cc: [],
  bcc: [],
  reply_to: [],
  subject: 'Hi',
  html: null,
  text: 'Hello',
  ...over,
});

async function create(over: Partial<EmailContent> = {}) {
  const id = newEmailId();
  await repo.create({ id, created_at: new Date().toISOString(), content: content(over) });
  return id;
}

/** DynamoDB's item size rule: UTF-8 bytes of each attribute name plus its value (numbers: ~1 byte per 2 digits + 1). */
const itemBytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((sum, [name, value]) => {
    const valueBytes =
      typeof value === 'number' ? Math.ceil(String(value).length / 2) + 1 : Buffer.byteLength(String(value));
    return sum + Buffer.byteLength(name) + valueBytes;
  }, 0);

describe('DynamoEmailRepository (dynalite)', () => {
  it('keeps the status item well under 1 KB even for the largest email', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `${'r'.repeat(50)}${i}@${'d'.repeat(60)}.example.com`);
    const id = await create({ to, subject: 's'.repeat(998), html: 'h'.repeat(200_000) });
    await repo.claim(id, Date.now(), 60_000);
    await repo.markSent(id, '0100018c-1234-5678-9abc-def012345678-000000', new Date().toISOString());
    await repo.finish(
      id,
      'bounced',
      new Date().toISOString(),
      'Permanent: General: smtp; 550 5.1.1 user unknown '.repeat(20),
    );
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk: keys.status } }),
    );
    expect(Item).toBeDefined();
    const bytes = itemBytes(Item as Record<string, unknown>);
    expect(bytes).toBeLessThan(600);
  });

  it('reads back what it stored', async () => {
    const id = await create({ cc: ['c@example.com'], html: '<b>x</b>' });
    expect(await repo.get(id)).toMatchObject({
      id,
      status: 'queued',
      cc: ['c@example.com'],
      html: '<b>x</b>',
      text: 'Hello',
      sent_at: null,
      events: [],
    });
    expect(await repo.get(newEmailId())).toBeNull();
  });

  it('lists newest first with offset, limit and has_more, and filters by status through its own index', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await create({ subject: `list-${i}` }));
    await repo.finish(ids[1] as string, 'delivered', new Date().toISOString());
    await repo.finish(ids[4] as string, 'delivered', new Date().toISOString());
    await repo.finish(ids[5] as string, 'failed', new Date().toISOString(), 'x');

    const newest = [...ids].reverse();
    const page1 = await repo.list({ limit: 3, offset: 0 });
    expect(page1.data.map((e) => e.id)).toEqual(newest.slice(0, 3));
    expect(page1.has_more).toBe(true);
    const page2 = await repo.list({ limit: 3, offset: 3 });
    expect(page2.data.map((e) => e.id)).toEqual(newest.slice(3, 6));

    const delivered = await repo.list({ limit: 10, offset: 0, status: 'delivered' });
    expect(delivered.data.map((e) => e.id)).toEqual([ids[4], ids[1]]);
    expect(delivered.data.every((e) => e.status === 'delivered')).toBe(true);
    expect(delivered.has_more).toBe(false);
    expect((await repo.list({ limit: 1, offset: 1, status: 'delivered' })).data.map((e) => e.id)).toEqual([
      ids[1],
    ]);
    const queued = await repo.list({ limit: 100, offset: 0, status: 'queued' });
    expect(queued.data.map((e) => e.id)).not.toContain(ids[1]);
    expect((await repo.list({ limit: 5, offset: 10_000 })).data).toEqual([]);
  });

  it('claims a queued email once: a second claim is busy, a claim after sending is done', async () => {
    const id = await create();
    const now = Date.now();
    expect(await repo.claim(id, now, 60_000)).toBe('claimed');
    expect(await repo.claim(id, now + 1, 60_000)).toBe('busy');
    // An expired lease (the worker died) can be taken over.
    expect(await repo.claim(id, now + 61_000, 60_000)).toBe('claimed');
    await repo.markSent(id, 'ses-1', new Date().toISOString());
    expect(await repo.claim(id, now + 200_000, 60_000)).toBe('done');
    expect(await repo.claim(newEmailId(), now, 60_000)).toBe('missing');
  });

  it('releases a lease so a retry can claim at once', async () => {
    const id = await create();
    expect(await repo.claim(id, Date.now(), 60_000)).toBe('claimed');
    await repo.release(id);
    expect(await repo.claim(id, Date.now(), 60_000)).toBe('claimed');
  });

  it('moves status forward only: the first final status wins, later ones change nothing', async () => {
    const id = await create();
    expect(await repo.finish(id, 'delivered', '2026-11-22T00:00:01.000Z')).toBe(true);
    expect(await repo.finish(id, 'bounced', '2026-11-22T00:00:02.000Z', 'late bounce')).toBe(false);
    expect(await repo.finish(id, 'delivered', '2026-11-22T00:00:03.000Z')).toBe(false);
    expect(await repo.claim(id, Date.now(), 1000)).toBe('done');
    const email = await repo.get(id);
    expect(email?.status).toBe('delivered');
    expect(email?.failure_reason).toBeNull();
    expect(await repo.finish(newEmailId(), 'delivered', new Date().toISOString())).toBe(false);
  });

  it('records events idempotently, in time order', async () => {
    const id = await create();
    const delivered = { type: 'delivered', at: '2026-11-22T00:00:02.000Z', recipients: ['a@example.com'] };
    await repo.addEvent(id, { type: 'sent', at: '2026-11-22T00:00:01.000Z', recipients: ['a@example.com'] });
    await repo.addEvent(id, delivered);
    await repo.addEvent(id, delivered);
    expect((await repo.get(id))?.events.map((e) => e.type)).toEqual(['sent', 'delivered']);
  });
});
