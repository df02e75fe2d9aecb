/**
 * Where the emails raise a broadcast's tally (issue 41), through the consumers' handlers with real
 * event shapes (SQS records of send jobs and of SES events, test/fixtures), over dynalite: each
 * outcome of a broadcast's email reaches the tally once however often its event comes, an email
 * of no broadcast never does, a tally that fails never fails the email's record, and the webhooks
 * of a broadcast's email carry `broadcast_id`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoBroadcastRecipientReads } from '../../functions/adapters/dynamodb/broadcast-recipients.js';
import { DynamoBroadcastTally } from '../../functions/adapters/dynamodb/broadcast-tally.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSuppressionRepository } from '../../functions/adapters/dynamodb/suppression-repository.js';
import { BROADCAST_ID_TAG } from '../../functions/adapters/ses/mailer.js';
import type { BroadcastTally } from '../../functions/emails/broadcast-tally.js';
import { endEmail } from '../../functions/emails/end.js';
import { MailerError } from '../../functions/emails/ports.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import type { CounterName } from '../../functions/shared/ports.js';
import { newSuppressionId } from '../../functions/suppressions/model.js';
import type { WebhookEvent } from '../../functions/webhooks/model.js';
import type { EventPublisher } from '../../functions/webhooks/ports.js';
import { unsubscribeCounter } from '../../functions/wiring/unsubscribe.js';
import { sqsEvent } from '../support/events.js';
import { emailContent, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let emails: DynamoEmailRepository;
let tally: DynamoBroadcastTally;
let reads: DynamoBroadcastRecipientReads;
let published: WebhookEvent[];
let counted: CounterName[];
const counters = { count: (name: CounterName) => void counted.push(name) };
const log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const events: EventPublisher = {
  subscriptions: async () => ({
    wants: () => true,
    publish: async (raised) => void published.push(...raised),
  }),
};

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  tally = new DynamoBroadcastTally(table.db, table.tableName);
  reads = new DynamoBroadcastRecipientReads(table.db, table.tableName);
});
afterAll(() => table.stop());
beforeEach(() => {
  published = [];
  counted = [];
});

/** Every call the tally is given, passed on to the real one (or failing, when `fails`). */
function watched(fails = false) {
  const calls: string[] = [];
  const broadcasts: BroadcastTally = {
    record: async (entry) => {
      calls.push(`${entry.type}:${entry.address}${entry.link ? `:${entry.link}` : ''}`);
      if (fails) throw new Error('DynamoDB refused the write');
      await tally.record(entry);
    },
    ended: async (entry) => {
      calls.push(`ended:${entry.reason}`);
      if (fails) throw new Error('DynamoDB refused the write');
      await tally.ended(entry);
    },
  };
  return { broadcasts, calls };
}

/**
 * What the send consumer's gate reads for a broadcast's email (wired for every consumer): whether
 * its contact unsubscribed (none has here), and its one-click link.
 */
const gate = () => ({
  audience: new DynamoAudienceReads(table.db, table.tableName),
  unsubscribeLinks: { url: async () => 'https://mail.acme.test/unsubscribe/token' },
});

/** A queued email of a broadcast (or of none) to one recipient. */
async function queuedEmail(broadcastId: string | undefined, to = 'Reader@Example.com') {
  const id = newEmailId();
  const content = emailContent({ to: [to], ...(broadcastId ? { broadcast_id: broadcastId } : {}) });
  await emails.create({ id, created_at: new Date().toISOString(), content });
  return { id, content };
}

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
/** An SES event of a fixture's shape about this email, its tags as the mailer sets them. */
function sesRecord(
  name: 'ses-event-open.json' | 'ses-event-click.json' | 'ses-event-bounce.json',
  emailId: string,
  broadcastId: string | undefined,
  // biome-ignore lint/suspicious/noExplicitAny: an SES event of the fixture, changed field by field
  change: (event: Record<string, any>) => void = () => undefined,
) {
  const event = JSON.parse(fixture(name).replace('__EMAIL_ID__', emailId));
  event.mail.destination = ['reader@example.com'];
  if (broadcastId) event.mail.tags[BROADCAST_ID_TAG] = [broadcastId];
  change(event);
  return { body: JSON.stringify(event) };
}
const delivery = (emailId: string, broadcastId?: string) =>
  sesRecord('ses-event-bounce.json', emailId, broadcastId, (e) => {
    e.eventType = 'Delivery';
    delete e.bounce;
    e.delivery = { timestamp: '2026-11-22T03:20:05.000Z', recipients: ['reader@example.com'] };
  });
const complaint = (emailId: string, broadcastId?: string) =>
  sesRecord('ses-event-bounce.json', emailId, broadcastId, (e) => {
    e.eventType = 'Complaint';
    delete e.bounce;
    e.complaint = {
      timestamp: '2026-11-22T03:30:00.000Z',
      complainedRecipients: [{ emailAddress: 'reader@example.com' }],
      complaintFeedbackType: 'abuse',
    };
  });
const bounce = (emailId: string, broadcastId?: string) =>
  sesRecord('ses-event-bounce.json', emailId, broadcastId, (e) => {
    e.bounce.bouncedRecipients[0].emailAddress = 'reader@example.com';
  });
const click = (emailId: string, broadcastId: string | undefined, link: string) =>
  sesRecord('ses-event-click.json', emailId, broadcastId, (e) => {
    e.click.link = link;
  });

describe("a broadcast's email raises its tally", () => {
  it('once sent, however often its message comes, and once per outcome of its SES events', async () => {
    const b = newUuid();
    const { id, content } = await queuedEmail(b);
    const { broadcasts, calls } = watched();
    const consumer = makeConsumer({
      emails,
      mailer: new ScriptedMailer(),
      clock: { now: () => new Date() },
      maxReceiveCount: 5,
      broadcasts,
      ...gate(),
    });
    const job = { body: toQueueMessage({ id, content }) };
    await consumer(sqsEvent([job]));
    await consumer(sqsEvent([{ ...job, receiveCount: 2 }]));
    expect(calls).toEqual(['sent:reader@example.com']);

    const handler = makeEventsConsumer({ emails, events, broadcasts, counters, log });
    const link = 'https://acme.test/pricing';
    const records = [
      delivery(id, b),
      delivery(id, b),
      sesRecord('ses-event-open.json', id, b),
      sesRecord('ses-event-open.json', id, b),
      sesRecord('ses-event-open.json', id, b, (e) => {
        e.open.timestamp = '2026-11-22T04:00:00.000Z';
      }),
      click(id, b, link),
      click(id, b, link),
      complaint(id, b),
    ];
    expect((await handler(sqsEvent(records))).batchItemFailures).toEqual([]);
    expect(calls.slice(1).sort()).toEqual(
      [
        'clicked:reader@example.com:https://acme.test/pricing',
        'complained:reader@example.com',
        'delivered:reader@example.com',
        'opened:reader@example.com',
        'opened:reader@example.com',
      ].sort(),
    );
    const totals = await tally.totals(b);
    expect(totals).toMatchObject({
      sent: 1,
      delivered: 1,
      opened: 2,
      unique_opened: 1,
      clicked: 1,
      unique_clicked: 1,
      complained: 1,
    });
    expect((await reads.clickedLinks(b, { limit: 10 })).rows).toMatchObject([
      { url: link, clicks: 1, unique_clicks: 1 },
    ]);
    // Its webhooks carry the broadcast's id (Resend's `broadcast_id` in email events' data).
    const types = new Set(published.map((e) => e.type));
    expect([...types].sort()).toEqual(
      ['email.clicked', 'email.complained', 'email.delivered', 'email.opened'].sort(),
    );
    for (const event of published) expect(event.data).toMatchObject({ email_id: id, broadcast_id: b });
  });

  it('a bounce with its type; the Send event of an email the consumer did not record', async () => {
    const b = newUuid();
    const { id } = await queuedEmail(b);
    const { broadcasts, calls } = watched();
    const handler = makeEventsConsumer({ emails, events, broadcasts, counters, log });
    const send = sesRecord('ses-event-bounce.json', id, b, (e) => {
      e.eventType = 'Send';
      delete e.bounce;
    });
    await handler(sqsEvent([send, bounce(id, b), bounce(id, b)]));
    expect(calls.sort()).toEqual(['bounced:reader@example.com', 'sent:reader@example.com']);
    expect((await reads.recipients(b, 'bounced', { limit: 10 })).rows).toMatchObject([
      { email: 'reader@example.com', email_id: id, bounce_type: 'permanent' },
    ]);
    expect(published.find((e) => e.type === 'email.bounced')?.data).toMatchObject({ broadcast_id: b });
  });

  it('never for an email of no broadcast', async () => {
    const { id, content } = await queuedEmail(undefined);
    const { broadcasts, calls } = watched();
    await makeConsumer({
      emails,
      mailer: new ScriptedMailer(),
      clock: { now: () => new Date() },
      maxReceiveCount: 5,
      broadcasts,
      ...gate(),
    })(sqsEvent([{ body: toQueueMessage({ id, content }) }]));
    await makeEventsConsumer({ emails, events, broadcasts, counters, log })(
      sqsEvent([
        delivery(id),
        sesRecord('ses-event-open.json', id, undefined),
        click(id, undefined, 'https://a.test'),
      ]),
    );
    expect(calls).toEqual([]);
    expect(published.length).toBeGreaterThan(0);
    for (const event of published) expect(event.data).not.toHaveProperty('broadcast_id');
  });

  it('a tally that fails never fails the record: the event is done, the loss counted', async () => {
    const b = newUuid();
    const { id } = await queuedEmail(b);
    const { broadcasts, calls } = watched(true);
    const handler = makeEventsConsumer({ emails, events, broadcasts, counters, log });
    expect((await handler(sqsEvent([delivery(id, b)]))).batchItemFailures).toEqual([]);
    // An outcome is tried three times (emails/tally.ts) before its loss is counted, once.
    expect(calls).toEqual(Array(3).fill('delivered:reader@example.com'));
    expect(counted.filter((name) => name === 'BroadcastTallyLost')).toHaveLength(1);
    expect((await emails.get(id))?.status).toBe('delivered');
  });
});

describe('an email of a broadcast that ends unsent tells its tally', () => {
  it('suppressed when the suppression list leaves its recipient out', async () => {
    const b = newUuid();
    const { id, content } = await queuedEmail(b, 'listed@example.com');
    const suppressions = new DynamoSuppressionRepository(table.db, table.tableName);
    await suppressions.add({
      id: newSuppressionId(),
      email: 'listed@example.com',
      origin: 'manual',
      source_id: null,
      created_at: new Date().toISOString(),
    });
    const { broadcasts, calls } = watched();
    await makeConsumer({
      emails,
      suppressions,
      mailer: new ScriptedMailer(),
      clock: { now: () => new Date() },
      maxReceiveCount: 5,
      broadcasts,
      ...gate(),
    })(sqsEvent([{ body: toQueueMessage({ id, content }) }]));
    expect(calls).toEqual(['suppressed:listed@example.com']);
    expect((await reads.recipients(b, 'suppressed', { limit: 10 })).rows).toMatchObject([
      { email: 'listed@example.com' },
    ]);
  });

  it('ended when SES refuses it for good, when the gate withholds it, and when it dead-letters', async () => {
    const b = newUuid();
    const { broadcasts, calls } = watched();
    const refused = await queuedEmail(b);
    await makeConsumer({
      emails,
      mailer: new ScriptedMailer([
        new MailerError('Email address is not verified', 'rejected', 'MessageRejected'),
      ]),
      clock: { now: () => new Date() },
      maxReceiveCount: 5,
      broadcasts,
      ...gate(),
    })(sqsEvent([{ body: toQueueMessage(refused) }]));
    const withheld = await queuedEmail(b);
    await endEmail({ emails, broadcasts }, withheld.id, {
      ending: 'allSuppressed',
      at: new Date().toISOString(),
      email: withheld.content,
      write: { suppressed: { byReason: { topic_opted_out: [0] }, at: new Date().toISOString() } },
    });
    // The sweeper reads the email back: its stored content keeps the broadcast's id.
    const dead = await queuedEmail(b);
    expect((await emails.getContent(dead.id))?.broadcast_id).toBe(b);
    const ended = () =>
      endEmail({ emails, broadcasts }, dead.id, {
        ending: 'deadLettered',
        at: new Date().toISOString(),
        email: () => emails.getContent(dead.id),
      });
    await ended();
    await ended();
    expect(calls).toEqual(['ended:failed', 'ended:withheld', 'ended:failed']);
    expect((await tally.totals(b)).ended).toBe(3);
  });
});

describe('an opt-out through a broadcast email', () => {
  it("is the recipient's `unsubscribed`, as well as the metric", async () => {
    const b = newUuid();
    const { id } = await queuedEmail(b);
    const metricCounts: unknown[] = [];
    const metrics = { count: async (...args: unknown[]) => void metricCounts.push(args) };
    await unsubscribeCounter(emails, metrics, tally)(id, '2026-11-22T05:00:00.000Z');
    expect((await reads.recipients(b, 'unsubscribed', { limit: 10 })).rows).toMatchObject([
      { email: 'reader@example.com', email_id: id, at: '2026-11-22T05:00:00.000Z' },
    ]);
    expect(metricCounts).toEqual([['acme.com', { unsubscribed: 1 }, id, b]]);
    // An opt-out through another email counts no broadcast.
    const other = await queuedEmail(undefined);
    await unsubscribeCounter(emails, metrics, tally)(other.id, '2026-11-22T05:00:00.000Z');
    expect((await tally.totals(b)).unsubscribed).toBe(1);
  });
});
