/**
 * Per-recipient outcomes and the suppression list against the emulated table: the events consumer
 * (SES's event shapes in SQS records) settles an email once every recipient has an outcome, in any
 * order; hard bounces and complaints fill the list; the send consumer leaves listed recipients out.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSuppressionRepository } from '../../functions/adapters/dynamodb/suppression-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import type { SesEvent } from '../../functions/adapters/ses/events.js';
import type { EmailContent } from '../../functions/emails/email.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { newSuppressionId } from '../../functions/suppressions/model.js';
import type { Suppression } from '../../functions/suppressions/ports.js';
import { sqsEvent } from '../support/events.js';
import { emailContent, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let emails: DynamoEmailRepository;
let suppressions: DynamoSuppressionRepository;
beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  suppressions = new DynamoSuppressionRepository(table.db, table.tableName);
});
afterAll(() => table.stop());

async function queued(over: Partial<EmailContent>) {
  const id = newEmailId();
  const content = emailContent(over);
  await emails.create({ id, created_at: new Date().toISOString(), content });
  return { id, content };
}

/** An SES event (as "Examples of event data that Amazon SES publishes" shows them) for one email. */
function ses(
  id: string,
  type: string,
  recipients: string[],
  at: string,
  extra: Partial<SesEvent> = {},
): string {
  const mail = {
    timestamp: '2026-11-24T10:00:00.000Z',
    messageId: 'mid-1',
    destination: recipients,
    tags: { email_id: [id] },
  };
  const body: SesEvent = { eventType: type, mail, ...extra };
  if (type === 'Delivery')
    body.delivery = { timestamp: at, recipients, smtpResponse: '250 2.6.0 Message received' };
  if (type === 'DeliveryDelay')
    body.deliveryDelay = {
      timestamp: at,
      delayType: 'MailboxFull',
      delayedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
    };
  if (type === 'Complaint')
    body.complaint = {
      timestamp: at,
      complainedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
      complaintFeedbackType: 'abuse',
    };
  return JSON.stringify(body);
}
const bounce = (id: string, recipient: string, bounceType: 'Permanent' | 'Transient' = 'Permanent') =>
  ses(id, 'Bounce', [recipient], '', {
    bounce: {
      timestamp: '2026-11-24T10:00:02.000Z',
      bounceType,
      bounceSubType: bounceType === 'Permanent' ? 'General' : 'MailboxFull',
      bouncedRecipients: [{ emailAddress: recipient, diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
    },
  });

const [a, b, c] = ['a@example.com', 'b@example.com', 'c@example.com'];

describe('per-recipient outcomes (dynalite)', () => {
  it('settles a three-recipient email the same way whatever order its events come in, duplicates and all', async () => {
    const handler = makeEventsConsumer({ emails, suppressions });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { minLength: 6, maxLength: 6 }), async (keysOrder) => {
        const { id } = await queued({ to: [`X <${a}>`, b], cc: [c] });
        const events = [
          ses(id, 'Delivery', [a], '2026-11-24T10:00:01.000Z'),
          bounce(id, b),
          ses(id, 'DeliveryDelay', [c], '2026-11-24T10:00:03.000Z'),
          ses(id, 'Delivery', [c], '2026-11-24T10:05:00.000Z'),
          ses(id, 'Complaint', [a], '2026-11-24T11:00:00.000Z'),
          bounce(id, b),
        ];
        const order = events
          .map((body, i) => ({ body, key: keysOrder[i] ?? 0, i }))
          .sort((x, y) => x.key - y.key || x.i - y.i);
        // One record at a time, in that order (each its own invocation, as SQS may deliver them).
        for (const { body } of order)
          expect((await handler(sqsEvent([{ body }]))).batchItemFailures).toEqual([]);
        const email = await emails.get(id);
        expect(email).toMatchObject({
          status: 'bounced',
          last_event: 'complained',
          failure_reason: 'did not reach 1 of 3 recipients (bounced or suppressed; see recipients)',
          sent_at: '2026-11-24T10:00:00.000Z',
        });
        expect(email?.recipients.map((r) => [r.email, r.kind, r.status])).toEqual([
          [a, 'to', 'complained'],
          [b, 'to', 'bounced'],
          [c, 'cc', 'delivered'],
        ]);
        expect((await emails.getState(id))?.tally).toEqual({ total: 3, done: 3, lost: 1 });
      }),
      { numRuns: 12, seed: 20261124 },
    );
  });

  it('stays queued while some recipients have no outcome, with last_event moving', async () => {
    const { id } = await queued({ to: [a, b] });
    const handler = makeEventsConsumer({ emails, suppressions });
    await handler(sqsEvent([{ body: ses(id, 'Delivery', [a], '2026-11-24T10:00:01.000Z') }]));
    expect(await emails.get(id)).toMatchObject({ status: 'queued', last_event: 'delivered' });
    await handler(sqsEvent([{ body: ses(id, 'Delivery', [b], '2026-11-24T10:00:02.000Z') }]));
    expect(await emails.get(id)).toMatchObject({ status: 'delivered', failure_reason: null });
  });

  it('keeps the status item well under 1 KB with 50 recipients all settled', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `${'r'.repeat(50)}${i}@${'d'.repeat(60)}.example.com`);
    const { id } = await queued({ to });
    await emails.claim(id, Date.now(), {
      byReason: { previous_bounce: [0, 1, 2, 3], previous_complaint: [4, 5, 6], manual: [7, 8, 9] },
      at: new Date().toISOString(),
    });
    const handler = makeEventsConsumer({ emails });
    await handler(sqsEvent([{ body: ses(id, 'Delivery', to.slice(10, 30), '2026-11-24T10:00:01.000Z') }]));
    await handler(sqsEvent([{ body: bounce(id, to[30] as string) }]));
    await handler(sqsEvent([{ body: ses(id, 'Complaint', to.slice(31), '2026-11-24T10:00:03.000Z') }]));
    await handler(sqsEvent([{ body: ses(id, 'DeliveryDelay', to.slice(31), '2026-11-24T10:00:03.000Z') }]));
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk: keys.status } }),
    );
    expect(Item?.status).toBe('bounced');
    // DynamoDB's size rule: names, strings in UTF-8, numbers ~1 byte per 2 digits + 1, sets summed.
    const size = (value: unknown): number =>
      value instanceof Set
        ? [...value].reduce((sum: number, v) => sum + size(v), 0)
        : typeof value === 'number'
          ? Math.ceil(String(value).length / 2) + 1
          : Buffer.byteLength(String(value));
    const bytes = Object.entries(Item ?? {}).reduce(
      (sum, [name, value]) => sum + Buffer.byteLength(name) + size(value),
      0,
    );
    // Its shard in both index keys, and its expiry, included.
    expect(bytes).toBeLessThan(750);
  });
});

describe('the suppression list (dynalite)', () => {
  it('adds a hard-bounced or complaining address (first entry stands), never a transient bounce', async () => {
    const handler = makeEventsConsumer({ emails, suppressions });
    const hard = 'hard@list.example';
    const soft = 'soft@list.example';
    const { id } = await queued({ to: ['Hard <HARD@list.example>', soft] });
    await handler(
      sqsEvent([{ body: bounce(id, 'HARD@list.example') }, { body: bounce(id, soft, 'Transient') }]),
    );
    await handler(sqsEvent([{ body: ses(id, 'Complaint', [hard], '2026-11-24T10:00:05.000Z') }]));
    expect(await suppressions.get(hard)).toMatchObject({ email: hard, origin: 'bounce', source_id: id });
    expect(await suppressions.get(soft)).toBeNull();
    // A transient bounce still settles its recipient (SES gave up on it): the email is bounced.
    expect((await emails.get(id))?.recipients.map((r) => r.status)).toEqual(['bounced', 'bounced']);
  });

  it('finds, gets by id or address, lists newest first by origin with cursors, removes only the entry read', async () => {
    const added: Suppression[] = [];
    for (const [email, origin] of [
      ['l1@list.example', 'manual'],
      ['l2@list.example', 'complaint'],
      ['l3@list.example', 'manual'],
    ] as const)
      added.push(
        (
          await suppressions.add({
            id: newSuppressionId(),
            email,
            origin,
            source_id: null,
            created_at: new Date().toISOString(),
          })
        ).entry,
      );
    const again = await suppressions.add({
      ...(added[0] as Suppression),
      id: newSuppressionId(),
      origin: 'bounce',
    });
    expect(again).toEqual({ entry: added[0], added: false });
    expect(
      [
        ...(await suppressions.find(['l1@list.example', 'nobody@list.example', 'l3@list.example'])).keys(),
      ].sort(),
    ).toEqual(['l1@list.example', 'l3@list.example']);
    expect(await suppressions.get(added[1]?.id as string)).toEqual(added[1]);
    const manual = await suppressions.list({ limit: 1, offset: 0, origin: 'manual' });
    expect(manual).toEqual({ data: [added[2]], has_more: true });
    expect(
      await suppressions.list({ limit: 5, offset: 0, origin: 'manual', after: added[2]?.id }),
    ).toMatchObject({
      data: [added[0]],
    });
    const stale = { ...(added[0] as Suppression), id: newSuppressionId() };
    expect(await suppressions.remove(stale)).toBe(false);
    expect(await suppressions.remove(added[0] as Suppression)).toBe(true);
    expect(await suppressions.get('l1@list.example')).toBeNull();
  });
});

describe('the send consumer and the suppression list (dynalite)', () => {
  const listed = async (email: string, origin: 'bounce' | 'complaint' | 'manual') =>
    suppressions.add({
      id: newSuppressionId(),
      email,
      origin,
      source_id: null,
      created_at: new Date().toISOString(),
    });

  it('leaves a suppressed recipient out of the SES call, and settles the email once the others have outcomes', async () => {
    await listed('gone@send.example', 'bounce');
    const { id, content } = await queued({ to: ['ok@send.example'], bcc: ['Gone <Gone@send.example>'] });
    const mailer = new ScriptedMailer();
    const consumer = makeConsumer({ emails, suppressions, mailer, clock: systemClock, maxReceiveCount: 5 });
    await consumer(sqsEvent([{ body: JSON.stringify({ id, content }) }]));
    expect(mailer.sent.map((job) => [job.content.to, job.content.bcc])).toEqual([[['ok@send.example'], []]]);
    expect(await emails.get(id)).toMatchObject({ status: 'queued', last_event: 'sent' });
    await makeEventsConsumer({ emails, suppressions })(
      sqsEvent([{ body: ses(id, 'Delivery', ['ok@send.example'], '2026-11-24T10:00:01.000Z') }]),
    );
    const email = await emails.get(id);
    expect(email).toMatchObject({ status: 'bounced', last_event: 'delivered' });
    expect(email?.recipients).toEqual([
      expect.objectContaining({ email: 'ok@send.example', kind: 'to', status: 'delivered' }),
      expect.objectContaining({
        email: 'gone@send.example',
        kind: 'bcc',
        status: 'suppressed',
        last_event: 'suppressed',
        suppressed: { reason: 'previous_bounce' },
      }),
    ]);
  });

  it('makes no SES call when every recipient is suppressed: bounced at once, saying why; a duplicate message changes nothing', async () => {
    await listed('c1@send.example', 'complaint');
    await listed('m1@send.example', 'manual');
    const { id, content } = await queued({ to: ['c1@send.example'], cc: ['m1@send.example'] });
    const mailer = new ScriptedMailer();
    const consumer = makeConsumer({ emails, suppressions, mailer, clock: systemClock, maxReceiveCount: 5 });
    const body = JSON.stringify({ id, content });
    expect((await consumer(sqsEvent([{ body }, { body }]))).batchItemFailures).toEqual([]);
    expect(mailer.sent).toEqual([]);
    const email = await emails.get(id);
    expect(email).toMatchObject({
      status: 'bounced',
      last_event: 'suppressed',
      sent_at: null,
      failure_reason:
        'every recipient is on the suppression list (previous_complaint: c1@send.example; manual: m1@send.example); nothing was sent',
    });
    expect(email?.recipients.map((r) => r.suppressed?.reason)).toEqual(['previous_complaint', 'manual']);
    expect(email?.recipients[0]).toMatchObject({ status: 'suppressed', at: expect.stringMatching(/Z$/) });
    expect(email?.events).toEqual([]);
  });
});
