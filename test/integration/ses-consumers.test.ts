/** The send and SES-events consumers over a real (emulated) table, SES through its SDK's documented shapes. */
import { readFileSync } from 'node:fs';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import type { SesEvent } from '../../functions/adapters/ses/events.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { newEmailId } from '../../functions/shared/ids.js';
import type { EventPublisher } from '../../functions/webhooks/ports.js';
import { sqsEvent } from '../support/events.js';
import { emailContent } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

const bounceFixture = readFileSync(new URL('../fixtures/ses-event-bounce.json', import.meta.url), 'utf8');
const sesEvent = (
  id: string,
  change: (e: SesEvent & Record<string, unknown>) => void = () => undefined,
): SesEvent => {
  const event = JSON.parse(bounceFixture.replace('__EMAIL_ID__', id));
  change(event);
  return event;
};

const content = emailContent({
  from: '"Acme" <hello@acme.com>',
  to: ['a@example.com'],
  cc: ['c@example.com'],
  reply_to: ['r@example.com'],
  html: '<p>Hi</p>',
  text: null,
});

const error = (name: string, status?: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} message`), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
    ...extra,
  });

describe('send consumer against the SES SDK (aws-sdk-client-mock)', () => {
  const ses = mockClient(SESv2Client);
  let table: TestTable;
  let emails: DynamoEmailRepository;
  beforeAll(async () => {
    table = await startTestTable();
    emails = new DynamoEmailRepository(table.db, table.tableName);
  });
  afterAll(() => table.stop());
  beforeEach(() => ses.reset());

  it('a timeout after SES accepted never leads to a second SendEmail, however often the message comes back', async () => {
    const id = newEmailId();
    await emails.create({ id, created_at: new Date().toISOString(), content });
    // SES takes the email, but the answer never arrives: the SDK's request timeout fires.
    ses
      .on(SendEmailCommand)
      .rejectsOnce(error('TimeoutError', undefined, { code: 'ETIMEDOUT' }))
      .resolves({ MessageId: 'second-copy' });
    let now = Date.now();
    const consumer = makeConsumer({
      emails,
      mailer: new SesMailer(new SESv2Client({ region: 'us-east-1', maxAttempts: 1 }), 'set'),
      clock: { now: () => new Date(now) },
      maxReceiveCount: 5,
    });
    const body = JSON.stringify({ id, content });
    expect((await consumer(sqsEvent([{ body, messageId: 'a' }]))).batchItemFailures).toEqual([]);
    for (const receiveCount of [2, 3, 4, 5]) {
      now += 3_600_000; // an hour later each time: no lease to expire
      await consumer(sqsEvent([{ body, messageId: `again-${receiveCount}`, receiveCount }]));
    }
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
    expect(await emails.getState(id)).toMatchObject({
      status: 'queued',
      attempt_error: expect.stringContaining('TimeoutError'),
    });
  });
});

describe('SES events consumer (SQS records of SES events)', () => {
  let table: TestTable;
  let emails: DynamoEmailRepository;
  beforeAll(async () => {
    table = await startTestTable();
    emails = new DynamoEmailRepository(table.db, table.tableName);
  });
  afterAll(() => table.stop());

  /** A queued email to these recipients (its outcome settles once each has one). */
  async function queuedEmail(to = ['a@example.com']) {
    const id = newEmailId();
    await emails.create({ id, created_at: new Date().toISOString(), content: { ...content, to, cc: [] } });
    return id;
  }
  const deliveryOf = (id: string) =>
    sesEvent(id, (e) => {
      e.eventType = 'Delivery';
      delete e.bounce;
      e.delivery = { timestamp: '2026-11-22T03:20:05.000Z', recipients: ['a@example.com'] };
    });

  it('moves the email to bounced, once; a duplicate or a late delivery changes nothing', async () => {
    const id = await queuedEmail(['bounce@simulator.amazonses.com']);
    const handler = makeEventsConsumer({ emails });
    const bounce = JSON.stringify(sesEvent(id));
    expect((await handler(sqsEvent([{ body: bounce }, { body: bounce }]))).batchItemFailures).toEqual([]);
    await handler(sqsEvent([{ body: JSON.stringify(deliveryOf(id)) }]));
    const email = await emails.get(id);
    expect(email?.status).toBe('bounced');
    expect(email?.failure_reason).toContain('550 5.1.1');
    expect(email?.events.map((e) => e.type)).toEqual(['bounced', 'delivered']);
  });

  it('a Send event marks the email sent, so an attempt whose worker died is settled, not repeated', async () => {
    const id = await queuedEmail();
    await emails.claim(id, Date.now());
    const send = sesEvent(id, (e) => {
      e.eventType = 'Send';
      delete e.bounce;
      e.send = {};
    });
    const handler = makeEventsConsumer({ emails });
    await handler(sqsEvent([{ body: JSON.stringify(send) }, { body: JSON.stringify(send) }]));
    expect(await emails.getState(id)).toMatchObject({ status: 'queued', sent_at: send.mail.timestamp });
    expect(await emails.claim(id, Date.now())).toBe('done');
    // Delivered before its Send event was processed (events arrive in any order): the same outcome.
    const other = await queuedEmail();
    await emails.claim(other, Date.now());
    await handler(sqsEvent([{ body: JSON.stringify(deliveryOf(other)) }]));
    await handler(
      sqsEvent([{ body: JSON.stringify({ ...send, mail: { ...send.mail, tags: { email_id: [other] } } }) }]),
    );
    expect(await emails.getState(other)).toMatchObject({ status: 'delivered', sent_at: send.mail.timestamp });
  });

  it('a batch reads its Send events in one read: one the consumer recorded costs no write; one it did not is applied (and raises email.sent)', async () => {
    const recorded = await queuedEmail();
    await emails.claim(recorded, Date.now());
    await emails.markSent(recorded, 'ses-recorded', '2026-11-22T03:20:00.000Z');
    const unknown = await queuedEmail(); // its attempt's answer never came
    await emails.claim(unknown, Date.now());
    const sendOf = (id: string) =>
      JSON.stringify(
        sesEvent(id, (e) => {
          e.eventType = 'Send';
          delete e.bounce;
          e.send = {};
        }),
      );
    const writes: string[] = [];
    const reads: string[][] = [];
    const watched = Object.assign(Object.create(emails), {
      recordSent: (id: string, ...rest: unknown[]) => {
        writes.push(id);
        return (emails.recordSent as (...a: unknown[]) => Promise<unknown>).call(emails, id, ...rest);
      },
      states: (ids: string[]) => {
        reads.push(ids);
        return emails.states(ids);
      },
    });
    const published: string[] = [];
    const events: EventPublisher = {
      subscriptions: async () => ({
        wants: () => true,
        publish: async (built) => {
          published.push(...built.map((e) => `${e.type} ${e.data.email_id}`));
        },
      }),
    };
    const handler = makeEventsConsumer({ emails: watched, events });
    const result = await handler(
      sqsEvent([
        { body: sendOf(recorded) },
        { body: sendOf(unknown) },
        { body: JSON.stringify(deliveryOf(recorded)) },
      ]),
    );
    expect(result.batchItemFailures).toEqual([]);
    expect(reads).toEqual([[recorded, unknown]]);
    expect(writes).toEqual([unknown]);
    expect((await emails.getState(unknown))?.sent_at).toEqual(expect.any(String));
    // The consumer's record of the send stands.
    expect(await emails.getState(recorded)).toMatchObject({
      status: 'delivered',
      sent_at: '2026-11-22T03:20:00.000Z',
    });
    expect(published.sort()).toEqual([`email.delivered ${recorded}`, `email.sent ${unknown}`]);
  });

  it("applies an email's Send event before its delivery in one batch, so email.sent is raised when the consumer never recorded the send", async () => {
    const id = await queuedEmail();
    await emails.claim(id, Date.now()); // the attempt's answer never came
    const send = sesEvent(id, (e) => {
      e.eventType = 'Send';
      delete e.bounce;
      e.send = {};
    });
    // The delivery's write would win a race against a slower Send (two connections on AWS).
    const slowSend = Object.assign(Object.create(emails), {
      markSent: async (...args: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return (emails.markSent as (...a: unknown[]) => Promise<boolean>).apply(emails, args);
      },
    });
    const published: string[] = [];
    const events: EventPublisher = {
      subscriptions: async () => ({
        wants: () => true,
        publish: async (built) => {
          published.push(...built.map((e) => e.type));
        },
      }),
    };
    const handler = makeEventsConsumer({ emails: slowSend, events });
    const result = await handler(
      sqsEvent([{ body: JSON.stringify(deliveryOf(id)) }, { body: JSON.stringify(send) }]),
    );
    expect(result.batchItemFailures).toEqual([]);
    expect(published).toEqual(['email.sent', 'email.delivered']);
    expect(await emails.getState(id)).toMatchObject({ status: 'delivered', sent_at: send.mail.timestamp });
  });

  it('applies SES Open and Click events: last_event clicked, status delivered, events kept, webhooks raised', async () => {
    const id = await queuedEmail(['reader@example.com']);
    const fixture = (name: 'open' | 'click') =>
      readFileSync(new URL(`../fixtures/ses-event-${name}.json`, import.meta.url), 'utf8').replace(
        '__EMAIL_ID__',
        id,
      );
    const delivery = sesEvent(id, (e) => {
      e.eventType = 'Delivery';
      delete e.bounce;
      e.delivery = { timestamp: '2026-11-22T03:20:05.000Z', recipients: ['reader@example.com'] };
    });
    const proxied = JSON.parse(fixture('open')) as SesEvent;
    if (proxied.open) proxied.open.userAgent = 'Mozilla/5.0';
    const published: string[] = [];
    const events: EventPublisher = {
      subscriptions: async () => ({
        wants: () => true,
        publish: async (built) => {
          published.push(...built.map((e) => e.type));
        },
      }),
    };
    const handler = makeEventsConsumer({ emails, events });
    // The click first, duplicated, then the delivery and two opens (one by Apple's proxy).
    const result = await handler(
      sqsEvent([
        { body: fixture('click') },
        { body: fixture('click') },
        { body: JSON.stringify(delivery) },
        { body: fixture('open') },
        { body: JSON.stringify(proxied) },
      ]),
    );
    expect(result.batchItemFailures).toEqual([]);
    const email = await emails.get(id);
    expect(email).toMatchObject({ status: 'delivered', last_event: 'clicked' });
    expect(email?.recipients).toEqual([
      expect.objectContaining({ email: 'reader@example.com', status: 'delivered', last_event: 'clicked' }),
    ]);
    // The duplicated click is one event.
    expect(email?.events.map((e) => e.type).sort()).toEqual(['clicked', 'delivered', 'opened', 'opened']);
    expect(
      email?.events
        .filter((e) => e.type === 'opened')
        .map((e) => e.automated ?? null)
        .sort(),
    ).toEqual([null, 'privacy_proxy']);
    expect(email?.events.filter((e) => e.type === 'clicked')).toEqual([
      expect.objectContaining({
        detail: 'https://acme.test/pricing?utm_source=email',
        ip_address: '192.0.2.1',
      }),
    ]);
    expect(published.filter((t) => t === 'email.clicked')).toHaveLength(2);
    expect(published.filter((t) => t === 'email.opened')).toHaveLength(2);
    expect(published).toContain('email.delivered');
  });

  it('accepts the SNS envelope too (raw message delivery off)', async () => {
    const id = await queuedEmail();
    const envelope = {
      Type: 'Notification',
      MessageId: 'x',
      TopicArn: 'arn:aws:sns:us-east-1:1:t',
      Message: JSON.stringify(deliveryOf(id)),
    };
    await makeEventsConsumer({ emails })(sqsEvent([{ body: JSON.stringify(envelope) }]));
    expect((await emails.get(id))?.status).toBe('delivered');
  });

  it('acknowledges events that are not ours and reports unreadable ones', async () => {
    const result = await makeEventsConsumer({ emails })(
      sqsEvent([
        { body: JSON.stringify(sesEvent('someone-else')), messageId: 'foreign' },
        { body: '{not json', messageId: 'broken' },
      ]),
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'broken' }]);
  });
});
