import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSweepStore } from '../../functions/adapters/dynamodb/sweep-store.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import type { EmailContent } from '../../functions/emails/email.js';
import { emailIdAt, FIRST_EMAIL_ID, newEmailId } from '../../functions/shared/ids.js';
import { emailContent } from '../support/fakes.js';
import { losingFirstAnswer as losingAnswer } from '../support/losing-answer.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repo: DynamoEmailRepository;
beforeAll(async () => {
  table = await startTestTable();
  repo = new DynamoEmailRepository(table.db, table.tableName);
});
afterAll(() => table.stop());

const content = (over: Partial<EmailContent> = {}) => emailContent({ to: ['a@example.com'], ...over });

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

/** The email's event items (each event that is not kept on its status item). */
const eventItems = async (id: string) =>
  (
    await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :event)',
        ExpressionAttributeValues: { ':pk': keys.email(id), ':event': keys.eventPrefix },
      }),
    )
  ).Items ?? [];

describe('DynamoEmailRepository (dynalite)', () => {
  it('keeps the status item well under 1 KB even for the largest email', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `${'r'.repeat(50)}${i}@${'d'.repeat(60)}.example.com`);
    const id = await create({ to, subject: 's'.repeat(998), html: 'h'.repeat(200_000) });
    await repo.claim(id, Date.now());
    await repo.markUnknown(id, 'TimeoutError: '.repeat(40));
    await repo.markSent(id, '0100018c-1234-5678-9abc-def012345678-000000', new Date().toISOString());
    await repo.markSent(
      id,
      '0100018c-1234-5678-9abc-def012345678-000000',
      new Date().toISOString(),
      'delayed',
    );
    await repo.markSent(
      id,
      '0100018c-1234-5678-9abc-def012345678-000000',
      new Date().toISOString(),
      'complained',
    );
    await repo.finish(id, 'bounced', new Date().toISOString(), {
      reason: 'Permanent: General: smtp; 550 5.1.1 user unknown '.repeat(20),
      sent: { at: new Date().toISOString(), providerMessageId: 'x'.repeat(60) },
    });
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk: keys.status } }),
    );
    expect(Item).toBeDefined();
    const bytes = itemBytes(Item as Record<string, unknown>);
    // Its shard in both index keys and its expiry included.
    expect(bytes).toBeLessThan(650);
  });

  it('keeps bodies over 1 KB deflated in the body item, and reads them back (and older plain items) the same', async () => {
    const html = `<table>${'<tr><td style="padding:8px">Thanks for your order: item, quantity, price</td></tr>'.repeat(60)}</table>`;
    const text = 'Thanks for your order. '.repeat(40);
    const id = await create({ html, text });
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk: keys.body } }),
    );
    expect(Item?.html).toBeUndefined();
    expect(Item?.z).toBeInstanceOf(Uint8Array);
    // A fraction of the bodies' size, so of the item's write units (one per KB).
    expect((Item as { z: Uint8Array }).z.byteLength).toBeLessThan((html.length + text.length) / 5);
    expect(await repo.get(id)).toMatchObject({ html, text });
    expect(await repo.getContent(id)).toMatchObject({ html, text });
    // Small bodies stay as they are.
    const small = await create({ html: '<p>Hi</p>', text: 'Hi' });
    const { Item: plain } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(small), sk: keys.body } }),
    );
    expect(plain).toMatchObject({ html: '<p>Hi</p>', text: 'Hi' });
    // An item written before bodies were deflated reads as it always did.
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk: keys.email(small), sk: keys.body, html: html, text: null },
      }),
    );
    expect(await repo.getContent(small)).toMatchObject({ html, text: null });
    // With deflateBodies off (while a rollback to an older version must stay possible): plain.
    const plainRepo = new DynamoEmailRepository(table.db, table.tableName, { deflateBodies: false });
    const kept = newEmailId();
    await plainRepo.create({
      id: kept,
      created_at: new Date().toISOString(),
      content: content({ html, text }),
    });
    const { Item: asIs } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(kept), sk: keys.body } }),
    );
    expect(asIs).toMatchObject({ html, text });
    expect(asIs?.z).toBeUndefined();
  });

  it('says a send is news once: an open, click or delay carrying the send time SES recorded is not', async () => {
    const id = await create();
    const sesTime = new Date(Date.now() - 5_000).toISOString();
    // SES's Send event recorded it (the worker that sent it died before it could).
    expect(await repo.markSent(id, 'ses-1', sesTime)).toBe(true);
    // Every later event of the message names the same time and message id: none is news.
    expect(await repo.markSent(id, 'ses-1', sesTime, 'opened')).toBe(false);
    expect(await repo.markSent(id, 'ses-1', sesTime, 'clicked')).toBe(false);
    expect(await repo.markSent(id, 'ses-1', sesTime, 'delayed')).toBe(false);
    // An open that comes first (its Send event late) records the send: news, once.
    const other = await create();
    expect(await repo.markSent(other, 'ses-2', sesTime, 'opened')).toBe(true);
    expect(await repo.markSent(other, 'ses-2', sesTime, 'opened')).toBe(false);
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
    await repo.finish(ids[5] as string, 'failed', new Date().toISOString(), { reason: 'x' });

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

  it('records an attempt once and for good: no expiry, so no second attempt while its outcome is unknown', async () => {
    const id = await create();
    const now = Date.now();
    expect(await repo.claim(id, now)).toBe('claimed');
    expect(await repo.claim(id, now + 1)).toBe('in_progress');
    // A day later the attempt still stands: only a Send event or the sweeper settles it.
    expect(await repo.claim(id, now + 86_400_000)).toBe('in_progress');
    await repo.markSent(id, 'ses-1', new Date().toISOString());
    expect(await repo.claim(id, now + 86_400_001)).toBe('done');
    expect(await repo.claim(newEmailId(), now)).toBe('missing');
  });

  it('releases only its own attempt, and only while nothing says it was sent', async () => {
    const id = await create();
    const startedAt = Date.now();
    expect(await repo.claim(id, startedAt)).toBe('claimed');
    await repo.release(id, startedAt - 1, startedAt); // not this attempt: nothing changes
    expect(await repo.claim(id, startedAt + 1)).toBe('in_progress');
    await repo.release(id, startedAt, startedAt + 1);
    expect(await repo.getState(id)).toMatchObject({ refused_at: startedAt + 1 });
    expect(await repo.claim(id, startedAt + 2)).toBe('claimed');
    await repo.markSent(id, 'ses-1', new Date().toISOString());
    await repo.release(id, startedAt + 2, startedAt + 3); // sent: the attempt stays on record
    expect(await repo.getState(id)).toMatchObject({
      send_started_at: startedAt + 2,
      sent_at: expect.any(String),
    });
  });

  const losingFirstAnswer = (matches: (updateExpression: string) => boolean) => losingAnswer(table, matches);

  it("recognises its own claim when the claim's answer was lost and the SDK's retry found it taken", async () => {
    const lossy = losingFirstAnswer((e) => e.includes('send_started_at = :now'));
    const id = await create();
    const now = Date.now();
    expect(await lossy.repo.claim(id, now)).toBe('claimed');
    expect(lossy.seen.retried).toBe(1); // the first try's answer was lost; the retry's condition failed
    expect(await repo.getState(id)).toMatchObject({ send_started_at: now });
    // A claim that did not make it is still refused.
    expect(await lossy.repo.claim(id, now + 1)).toBe('in_progress');
    lossy.stop();
  });

  it('says which claim first recorded the suppressed recipients: not one after a release, and yes after a lost answer', async () => {
    const suppressed = (at: number) => ({
      byReason: { previous_bounce: [1] },
      at: new Date(at).toISOString(),
    });
    const lossy = losingFirstAnswer((e) => e.includes('send_started_at = :now'));
    const id = await create();
    const now = Date.now();
    expect(await lossy.repo.claim(id, now, suppressed(now))).toBe('claimed_suppressed');
    expect(lossy.seen.retried).toBe(1);
    // Released after a throttle, claimed again: the marks are there already.
    await repo.release(id, now, now + 1);
    expect(await repo.claim(id, now + 2, suppressed(now + 2))).toBe('claimed');
    const other = await create();
    expect(await repo.claim(other, now, suppressed(now))).toBe('claimed_suppressed');
    lossy.stop();
  });

  it('a send recorded by a try whose answer was lost is still recorded first by that worker', async () => {
    const lossy = losingFirstAnswer((e) => e.includes('sent_at = if_not_exists'));
    const id = await create();
    await repo.claim(id, Date.now());
    // true: this worker recorded it (and raises email.sent), though its first answer was lost.
    expect(await lossy.repo.markSent(id, 'ses-lost', '2026-11-22T00:00:01.000Z')).toBe(true);
    expect(lossy.seen.retried).toBe(1);
    // A later record (the Send event's) is not the first.
    expect(await repo.markSent(id, 'ses-lost', '2026-11-22T00:00:02.000Z')).toBe(false);
    lossy.stop();
  });

  it('a duplicated Send event (same time, same message id) is not recorded first twice', async () => {
    const id = await create();
    await repo.claim(id, Date.now());
    expect(await repo.markSent(id, 'ses-dup', '2026-11-22T00:00:01.000Z')).toBe(true);
    expect(await repo.markSent(id, 'ses-dup', '2026-11-22T00:00:01.000Z')).toBe(false);
  });

  it('keeps the first record of a send: the consumer and the Send event may both write it', async () => {
    const id = await create();
    await repo.claim(id, Date.now());
    await repo.markUnknown(id, 'TimeoutError: no answer');
    expect(await repo.getState(id)).toMatchObject({ attempt_error: 'TimeoutError: no answer' });
    await repo.markSent(id, 'from-event', '2026-11-22T00:00:01.000Z');
    await repo.markSent(id, 'from-consumer', '2026-11-22T00:00:02.000Z');
    const state = await repo.getState(id);
    expect(state).toMatchObject({ sent_at: '2026-11-22T00:00:01.000Z' });
    expect(state?.attempt_error).toBeUndefined();
  });

  it("guards the sweeper's transitions: unsent, this attempt, sent", async () => {
    const at = new Date().toISOString();
    const unsent = await create();
    const sending = await create();
    await repo.claim(sending, 1000);
    expect(await repo.finish(sending, 'failed', at, { as: 'endUnsent' })).toBe(false);
    expect(await repo.finish(sending, 'failed', at, { as: 'failAttempt', attemptStartedAt: 999 })).toBe(
      false,
    );
    expect(await repo.finish(sending, 'failed', at, { as: 'settleSent' })).toBe(false);
    expect(await repo.finish(sending, 'failed', at, { as: 'failAttempt', attemptStartedAt: 1000 })).toBe(
      true,
    );
    expect(await repo.finish(unsent, 'failed', at, { as: 'settleSent' })).toBe(false);
    expect(await repo.finish(unsent, 'failed', at, { as: 'endUnsent' })).toBe(true);
    const sent = await create();
    await repo.claim(sent, 1000);
    await repo.markSent(sent, 'ses-1', at);
    expect(await repo.finish(sent, 'failed', at, { as: 'failAttempt', attemptStartedAt: 1000 })).toBe(false);
    expect(await repo.finish(sent, 'failed', at, { as: 'settleSent' })).toBe(true);
  });

  it("a create whose first write landed but whose answer was lost succeeds on the SDK's retry", async () => {
    const id = newEmailId();
    const created_at = new Date().toISOString();
    await repo.create({ id, created_at, content: content() });
    await repo.create({ id, created_at, content: content() }); // the retry finds its own item
    await expect(
      repo.create({ id, created_at: new Date(0).toISOString(), content: content() }),
    ).rejects.toThrow();
  });

  it('a final event fills in sent_at when nothing recorded the send', async () => {
    const id = await create();
    await repo.claim(id, Date.now());
    const sent = { at: '2026-11-22T00:00:01.000Z', providerMessageId: 'ses-9' };
    expect(await repo.finish(id, 'delivered', '2026-11-22T00:00:02.000Z', { sent })).toBe(true);
    expect(await repo.get(id)).toMatchObject({ status: 'delivered', sent_at: sent.at });
  });

  it('moves status forward only: the first final status wins, later ones change nothing', async () => {
    const id = await create();
    expect(await repo.finish(id, 'delivered', '2026-11-22T00:00:01.000Z')).toBe(true);
    expect(await repo.finish(id, 'bounced', '2026-11-22T00:00:02.000Z', { reason: 'late bounce' })).toBe(
      false,
    );
    expect(await repo.finish(id, 'delivered', '2026-11-22T00:00:03.000Z')).toBe(false);
    expect(await repo.claim(id, Date.now())).toBe('done');
    const email = await repo.get(id);
    expect(email?.status).toBe('delivered');
    expect(email?.failure_reason).toBeNull();
    expect(await repo.finish(newEmailId(), 'delivered', new Date().toISOString())).toBe(false);
  });

  it('shows last_event and message_id from the status item alone, in get and list, in any event order', async () => {
    const show = async (id: string) => {
      const one = await repo.get(id);
      const listed = (await repo.list({ limit: 100, offset: 0 })).data.find((e) => e.id === id);
      expect(listed?.last_event).toBe(one?.last_event);
      expect(listed?.message_id).toBe(one?.message_id);
      return { last_event: one?.last_event, message_id: one?.message_id };
    };
    const at = new Date().toISOString();
    const id = await create();
    expect(await show(id)).toEqual({ last_event: 'queued', message_id: null });
    await repo.markSent(id, 'ses-1', at);
    expect(await show(id)).toEqual({ last_event: 'sent', message_id: 'ses-1' });
    await repo.markSent(id, 'ses-1', at, 'delayed');
    expect((await show(id)).last_event).toBe('delivery_delayed');
    await repo.finish(id, 'delivered', at);
    await repo.markSent(id, 'ses-1', at, 'delayed'); // late: changes nothing
    expect((await show(id)).last_event).toBe('delivered');
    await repo.markSent(id, 'ses-1', at, 'complained');
    expect((await show(id)).last_event).toBe('complained');

    // The complaint first, then the delivery: the same answer.
    const other = await create();
    await repo.markSent(other, 'ses-2', at, 'complained');
    await repo.finish(other, 'delivered', at);
    expect(await show(other)).toEqual({ last_event: 'complained', message_id: 'ses-2' });
  });

  it('records opens and clicks as marks and events: last_event moves, the status never', async () => {
    const at = new Date().toISOString();
    const id = await create();
    // An open before the delivery (SES's events come in any order): still queued, news `opened`.
    await repo.markSent(id, 'ses-1', at, 'opened');
    expect(await repo.get(id)).toMatchObject({ status: 'queued', last_event: 'opened' });
    await repo.finish(id, 'delivered', at);
    await repo.markSent(id, 'ses-1', at, 'clicked');
    await repo.markSent(id, 'ses-1', at, 'opened'); // late: changes nothing
    const click = {
      type: 'clicked',
      at,
      recipients: ['a@example.com'],
      detail: 'https://acme.test/pricing',
      user_agent: 'Mozilla/5.0',
      ip_address: '192.0.2.1',
      automated: 'privacy_proxy' as const,
    };
    await repo.addEvent(id, click);
    await repo.addEvent(id, click); // a redelivered event: one item
    const email = await repo.get(id);
    expect(email).toMatchObject({ status: 'delivered', last_event: 'clicked' });
    expect(email?.events).toEqual([click]);
    expect(email?.recipients).toEqual([
      expect.objectContaining({ email: 'a@example.com', last_event: 'clicked' }),
    ]);
    // A complaint outweighs them.
    await repo.markSent(id, 'ses-1', at, 'complained');
    expect((await repo.get(id))?.last_event).toBe('complained');
  });

  it('createMany: batch writes for fresh ids; with mayExist, never over an email that exists', async () => {
    const at = new Date().toISOString();
    const ids = [newEmailId(), newEmailId()];
    expect(await repo.createMany(ids.map((id) => ({ id, created_at: at, content: content() })))).toEqual({
      existing: [],
    });
    await repo.markSent(ids[0] as string, 'ses-1', at);
    const third = newEmailId();
    const again = await repo.createMany(
      [...ids, third].map((id) => ({
        id,
        created_at: new Date(Date.now() + 1).toISOString(),
        content: content(),
      })),
      { mayExist: true },
    );
    expect(again.existing.sort()).toEqual([...ids].sort());
    // The sent one keeps its record (a reset would let the consumer send it again).
    expect(await repo.getState(ids[0] as string)).toMatchObject({ status: 'queued', sent_at: at });
    expect(await repo.getState(third)).toMatchObject({ status: 'queued' });
    expect((await repo.states([...ids, third, newEmailId()])).map((s) => s.id).sort()).toEqual(
      [...ids, third].sort(),
    );
  });

  it('records events idempotently, in time order', async () => {
    const id = await create();
    const delivered = { type: 'delivered', at: '2026-11-22T00:00:02.000Z', recipients: ['a@example.com'] };
    await repo.addEvent(id, { type: 'sent', at: '2026-11-22T00:00:01.000Z', recipients: ['a@example.com'] });
    await repo.addEvent(id, delivered);
    await repo.addEvent(id, delivered);
    expect((await repo.get(id))?.events.map((e) => e.type)).toEqual(['sent', 'delivered']);
  });

  it('settles a one-recipient email with its event in one write (no item of its own), read back once in time order', async () => {
    const id = await create();
    const sent = { at: '2026-11-22T00:00:01.000Z', providerMessageId: 'ses-1' };
    await repo.addEvent(id, {
      type: 'delayed',
      at: '2026-11-22T00:00:01.500Z',
      recipients: ['a@example.com'],
    });
    const event = {
      type: 'delivered',
      at: '2026-11-22T00:00:02.000Z',
      recipients: ['a@example.com'],
      detail: '250 2.6.0 Message received',
    };
    const news = { addresses: ['a@example.com'], outcome: 'delivered' as const, at: event.at, sent, event };
    expect(await repo.settleRecipients(id, news)).toMatchObject({ status: 'delivered', changed: true });
    const items = await eventItems(id);
    expect(items.map((item) => item.type)).toEqual(['delayed']);
    const { Item: status } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk: keys.status } }),
    );
    // With its event, still well under 1 KB: each later change of it is one write unit.
    expect(
      itemBytes(status as Record<string, unknown>) + Buffer.byteLength(JSON.stringify(event)),
    ).toBeLessThan(800);
    const detail = await repo.get(id);
    expect(detail?.events).toEqual([
      { type: 'delayed', at: '2026-11-22T00:00:01.500Z', recipients: ['a@example.com'] },
      event,
    ]);
    expect(detail?.recipients).toEqual([
      expect.objectContaining({ email: 'a@example.com', status: 'delivered', last_event: 'delivered' }),
    ]);
    // The same event again (SQS delivers at least once): its own item now, and still shown once.
    expect(await repo.settleRecipients(id, news)).toMatchObject({ status: 'delivered', changed: false });
    expect((await eventItems(id)).map((item) => item.type)).toEqual(['delayed', 'delivered']);
    expect((await repo.get(id))?.events).toHaveLength(2);
  });

  it('keeps a settled one-recipient status item under 1 KB with its event, scheduled and bounced at the limits', async () => {
    const id = newEmailId();
    const due = new Date(Date.now() + 29 * 86_400_000).toISOString();
    await repo.create({
      id,
      created_at: new Date().toISOString(),
      content: content({ to: [`${'r'.repeat(40)}@${'d'.repeat(40)}.example.com`] }),
      schedule: { at: due, key_id: `key_${'k'.repeat(26)}`, dispatched: false },
    });
    const sent = { at: new Date().toISOString(), providerMessageId: `0100018c${'x'.repeat(52)}` };
    // The largest event kept on the item, and a reason at its bound.
    let detail = 'Permanent: General: smtp; 550 5.1.1 ';
    const event = () => ({
      type: 'bounced',
      at: sent.at,
      recipients: [`${'r'.repeat(40)}@${'d'.repeat(40)}.example.com`],
      detail,
      bounce: { type: 'Permanent', subType: 'General' },
    });
    while (Buffer.byteLength(JSON.stringify(event())) < 300) detail += 'x';
    detail = detail.slice(0, -1);
    await repo.settleRecipients(id, {
      addresses: event().recipients,
      outcome: 'bounced',
      at: sent.at,
      reason: `${detail} ${'y'.repeat(300)}`,
      sent,
      event: event(),
    });
    // Opened and clicked too: two more flags.
    await repo.markSent(id, sent.providerMessageId, sent.at, 'opened');
    await repo.markSent(id, sent.providerMessageId, sent.at, 'clicked');
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk: keys.status } }),
    );
    const bytes = Object.entries(Item as Record<string, unknown>).reduce(
      (sum, [name, value]) =>
        sum +
        Buffer.byteLength(name) +
        Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value)),
      0,
    );
    expect(Item?.ev).toEqual(event());
    expect(bytes).toBeLessThan(1024);
  });

  it('keeps a large event (a long bounce diagnostic) as an item of its own, written before the status', async () => {
    const id = await create();
    const event = {
      type: 'bounced',
      at: '2026-11-22T00:00:02.000Z',
      recipients: ['a@example.com'],
      detail: `Permanent: General: ${'smtp; 550 5.1.1 the mailbox does not exist here '.repeat(5)}`,
      bounce: { type: 'Permanent', subType: 'General' },
    };
    const sent = { at: event.at, providerMessageId: 'ses-1' };
    await repo.settleRecipients(id, {
      addresses: ['a@example.com'],
      outcome: 'bounced',
      at: event.at,
      sent,
      event,
    });
    expect((await eventItems(id)).map((item) => item.type)).toEqual(['bounced']);
    expect((await repo.get(id))?.events).toEqual([event]);
  });

  it('keeps two events of one type in the same millisecond for different recipients', async () => {
    const id = await create({ to: ['a@example.com', 'b@example.com'] });
    const at = '2026-11-22T00:00:02.000Z';
    await repo.addEvent(id, { type: 'bounced', at, recipients: ['a@example.com'], detail: '550 5.1.1' });
    await repo.addEvent(id, { type: 'bounced', at, recipients: ['b@example.com'], detail: '550 5.1.1' });
    await repo.addEvent(id, { type: 'bounced', at, recipients: ['b@example.com'], detail: '550 5.1.1' });
    const events = (await repo.get(id))?.events ?? [];
    expect(events.map((e) => e.recipients).sort()).toEqual([['a@example.com'], ['b@example.com']]);
  });
});

describe('DynamoSweepStore (dynalite)', () => {
  it('reads queued ids oldest first within [from, to), status items in batches, and contents', async () => {
    const store = new DynamoSweepStore(table.db, table.tableName);
    const start = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await create({ subject: `sweep-${i}` }));
    await repo.finish(ids[1] as string, 'delivered', new Date().toISOString());
    const queued = await store.queuedIds(emailIdAt(start), emailIdAt(Date.now() + 1), 100);
    expect(queued).toEqual([ids[0], ids[2], ids[3]]);
    expect(await store.queuedIds(emailIdAt(start), emailIdAt(Date.now() + 1), 2)).toEqual([ids[0], ids[2]]);
    expect(await store.queuedIds(ids[2] as string, emailIdAt(Date.now() + 1), 100)).toEqual([ids[2], ids[3]]);
    expect(await store.queuedIds(emailIdAt(Date.now() + 1), emailIdAt(start), 100)).toEqual([]);
    const states = await store.states([...queued, newEmailId()]);
    expect(states.map((s) => s.id).sort()).toEqual([...queued].sort());
    expect(await store.content(ids[0] as string)).toEqual(content({ subject: 'sweep-0' }));
    expect(await store.content(newEmailId())).toBeNull();
  });

  it('marks a re-queue at most once per period, and never for a sent or sending email', async () => {
    const store = new DynamoSweepStore(table.db, table.tableName);
    const id = await create();
    expect(await store.markRequeued(id, 10_000, 9_000)).toBe(true);
    expect(await store.markRequeued(id, 10_500, 9_500)).toBe(false); // re-queued since 9,500
    expect(await store.markRequeued(id, 20_000, 19_000)).toBe(true);
    const sending = await create();
    await repo.claim(sending, Date.now());
    expect(await store.markRequeued(sending, Date.now(), Date.now())).toBe(false);
  });

  it('keeps its progress', async () => {
    const store = new DynamoSweepStore(table.db, table.tableName);
    expect(await store.progress()).toEqual({
      fromId: FIRST_EMAIL_ID,
      oldCheckedAtMs: 0,
      oldFromId: FIRST_EMAIL_ID,
    });
    const saved = { fromId: 'em_x', oldCheckedAtMs: 5, oldFromId: 'em_w' };
    expect(await store.saveProgress(saved, await store.progress())).toBe(true);
    expect(await store.progress()).toEqual(saved);
    // Saved over what was read only: another run that moved the old pass on meanwhile wins.
    const stale = { ...saved, oldFromId: FIRST_EMAIL_ID };
    expect(await store.saveProgress({ ...saved, oldFromId: 'em_z' }, stale)).toBe(false);
    expect((await store.progress()).oldFromId).toBe('em_w');
  });

  it('saves its progress only over what it read: a rewind meanwhile wins; rewinds only go back', async () => {
    const store = new DynamoSweepStore(table.db, table.tableName);
    const read = await store.progress();
    expect(await store.saveProgress({ ...read, fromId: 'em_5', oldCheckedAtMs: 1 }, read)).toBe(true);
    const before = await store.progress();
    await store.rewind('em_3'); // a resumed request stored an email with an older id
    expect(await store.saveProgress({ ...before, fromId: 'em_9' }, before)).toBe(false);
    expect((await store.progress()).fromId).toBe('em_3');
    await store.rewind('em_7'); // never forward
    expect((await store.progress()).fromId).toBe('em_3');
  });
});
