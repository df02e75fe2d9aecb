/**
 * Which events the producers raise, and when: the SES events consumer and the send consumer over a
 * real (emulated) table, with the real publisher in front of a recording delivery queue.
 */
import { readFileSync } from 'node:fs';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSuppressionRepository } from '../../functions/adapters/dynamodb/suppression-repository.js';
import { DynamoWebhookRepository } from '../../functions/adapters/dynamodb/webhook-repository.js';
import type { SesEvent } from '../../functions/adapters/ses/events.js';
import { createDomain, getDomain } from '../../functions/domains/domains.js';
import { deliverEmail } from '../../functions/emails/deliver.js';
import { MailerError } from '../../functions/emails/ports.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { newEmailId } from '../../functions/shared/ids.js';
import type { Delivery } from '../../functions/webhooks/model.js';
import { newSigningSecret, type Webhook } from '../../functions/webhooks/model.js';
import { WebhookPublisher } from '../../functions/webhooks/publish.js';
import { sqsEvent } from '../support/events.js';
import { emailContent, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

const bounceFixture = readFileSync(new URL('../fixtures/ses-event-bounce.json', import.meta.url), 'utf8');
const sesEvent = (id: string, change: (e: SesEvent & Record<string, unknown>) => void = () => undefined) => {
  const event = JSON.parse(bounceFixture.replace('__EMAIL_ID__', id));
  change(event);
  return JSON.stringify(event);
};

let table: TestTable;
let emails: DynamoEmailRepository;
const queued: Delivery[] = [];
const endpoint = (id: string, events: Webhook['events']): Webhook => ({
  id,
  endpoint: `https://${id}.example.com/`,
  events,
  status: 'enabled',
  created_at: '2026-11-20T00:00:00.000Z',
  signing_secret: newSigningSecret(),
});
const publisher = new WebhookPublisher({
  webhooks: {
    all: async () => [
      endpoint('wh_all', [
        'email.sent',
        'email.delivered',
        'email.bounced',
        'email.suppressed',
        'email.failed',
      ]),
      endpoint('wh_domains', ['domain.created', 'domain.updated']),
    ],
  },
  queue: { enqueue: async (d) => void queued.push(...d) },
});
const take = () => queued.splice(0).map((d) => ({ ...d, event: JSON.parse(d.body) }));

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
});
afterAll(() => table.stop());

describe('events raised by the SES events consumer', () => {
  const consumer = () => makeEventsConsumer({ emails, events: publisher });

  it('raises email.bounced with the bounce, once per event however often SES delivers it (same message id)', async () => {
    const id = newEmailId();
    await emails.create({
      id,
      created_at: new Date().toISOString(),
      content: emailContent({ to: ['bounce@simulator.amazonses.com'] }),
    });
    const body = sesEvent(id);
    await consumer()(sqsEvent([{ body }, { body }]));
    const raised = take();
    expect(raised).toHaveLength(2);
    expect(raised[0]?.message_id).toBe(raised[1]?.message_id);
    expect(raised[0]).toMatchObject({ webhook_id: 'wh_all', type: 'email.bounced' });
    expect(raised[0]?.event).toEqual({
      type: 'email.bounced',
      created_at: '2026-11-22T03:20:01.123Z',
      data: {
        email_id: id,
        created_at: expect.any(String),
        from: 'hello@acme.test',
        to: ['bounce@simulator.amazonses.com'],
        subject: 'Hello',
        message_id: '01000171ec4a8c0f-7e2a3e2d-4c8a-4b4a-9f5e-2b3c4d5e6f70-000000',
        tags: {},
        bounce: {
          type: 'Permanent',
          subType: 'General',
          message: 'Permanent: General: smtp; 550 5.1.1 user unknown',
        },
      },
    });
    // The email's state was stored before the event was raised.
    expect((await emails.getState(id))?.status).toBe('bounced');
  });

  it("raises email.sent from SES's Send event only when the consumer had not recorded the send", async () => {
    const recorded = newEmailId();
    const missed = newEmailId();
    for (const id of [recorded, missed])
      await emails.create({ id, created_at: new Date().toISOString(), content: emailContent() });
    await emails.markSent(recorded, 'ses-1', new Date().toISOString());
    const send = (id: string) =>
      sesEvent(id, (e) => {
        e.eventType = 'Send';
        delete e.bounce;
      });
    await consumer()(sqsEvent([{ body: send(recorded) }, { body: send(missed) }]));
    const raised = take();
    expect(raised.map((d) => [d.type, d.event.data.email_id])).toEqual([['email.sent', missed]]);
  });

  it('raises nothing for an event type no endpoint subscribes to', async () => {
    const id = newEmailId();
    await emails.create({ id, created_at: new Date().toISOString(), content: emailContent() });
    await emails.markSent(id, 'ses-1', new Date().toISOString());
    const complaint = sesEvent(id, (e) => {
      e.eventType = 'Complaint';
      delete e.bounce;
      e.complaint = {
        timestamp: new Date().toISOString(),
        complainedRecipients: [{ emailAddress: 'a@example.com' }],
      };
    });
    await consumer()(sqsEvent([{ body: complaint }]));
    expect(take()).toEqual([]);
  });
});

describe('the endpoints read once a batch', () => {
  it('reads the WEBHOOKS partition once for a batch of N events, and an endpoint created between two batches gets the second', async () => {
    // The real repository over a client that counts its Queries (the endpoints' only read).
    let queries = 0;
    const counted = {
      send: (command: unknown) => {
        if (command instanceof QueryCommand) queries++;
        return table.db.send(command as QueryCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    const webhooks = new DynamoWebhookRepository(counted, table.tableName);
    const sent: Delivery[] = [];
    const consumer = makeEventsConsumer({
      emails,
      events: new WebhookPublisher({ webhooks, queue: { enqueue: async (d) => void sent.push(...d) } }),
    });
    const bounces = async (n: number) => {
      const ids = Array.from({ length: n }, () => newEmailId());
      for (const id of ids)
        await emails.create({
          id,
          created_at: new Date().toISOString(),
          content: emailContent({ to: ['bounce@simulator.amazonses.com'] }),
        });
      return sqsEvent(ids.map((id) => ({ body: sesEvent(id) })));
    };
    await webhooks.create({ ...endpoint('wh_01first0000000000000000000', ['email.bounced']) });
    const first = await bounces(8);
    const second = await bounces(8);

    queries = 0;
    await consumer(first);
    expect(queries).toBe(1);
    expect(sent.splice(0).map((d) => d.webhook_id)).toEqual(Array(8).fill('wh_01first0000000000000000000'));

    await webhooks.create({ ...endpoint('wh_01second000000000000000000', ['email.bounced']) });
    queries = 0;
    await consumer(second);
    expect(queries).toBe(1);
    const to = sent.splice(0).map((d) => d.webhook_id);
    expect(to.filter((id) => id === 'wh_01second000000000000000000')).toHaveLength(8);
    expect(to.filter((id) => id === 'wh_01first0000000000000000000')).toHaveLength(8);
  });
});

describe('events raised by the send consumer', () => {
  it('email.sent once SES took it, email.suppressed for the recipients left out, email.failed when SES refuses', async () => {
    const suppressions = new DynamoSuppressionRepository(table.db, table.tableName);
    await suppressions.add({
      id: 'sup_01m80n2x4cf0t8d1v2kq7w5mzs',
      email: 'gone@example.com',
      origin: 'complaint',
      source_id: null,
      created_at: new Date().toISOString(),
    });
    const id = newEmailId();
    const content = emailContent({
      to: ['Kept <kept@example.com>', 'gone@example.com'],
      subject: 'Partly',
      tags: [{ name: 'plan', value: 'pro' }],
    });
    await emails.create({ id, created_at: new Date().toISOString(), content });
    const deps = {
      emails,
      suppressions,
      mailer: new ScriptedMailer(['ses-42']),
      clock: { now: () => new Date() },
      events: publisher,
    };
    expect((await deliverEmail(deps, { id, content }, false)).result).toBe('sent');
    const raised = take().map((d) => d.event);
    expect(raised.map((e) => e.type)).toEqual(['email.suppressed', 'email.sent']);
    expect(raised[0].data).toMatchObject({
      to: ['gone@example.com'],
      tags: { plan: 'pro' },
      suppressed: { type: 'Suppressed', reason: 'previous_complaint' },
    });
    expect(raised[1].data).toMatchObject({
      to: ['kept@example.com'],
      message_id: 'ses-42',
      subject: 'Partly',
    });

    const rejected = newEmailId();
    await emails.create({ id: rejected, created_at: new Date().toISOString(), content: emailContent() });
    const mailer = {
      send: async () => {
        throw new MailerError('Email address is not verified.', 'rejected', 'MessageRejected');
      },
    };
    expect(
      (await deliverEmail({ ...deps, mailer }, { id: rejected, content: emailContent() }, false)).result,
    ).toBe('failed');
    expect(take().map((d) => [d.type, d.event.data.failed])).toEqual([
      ['email.failed', { reason: 'MessageRejected: Email address is not verified.' }],
    ]);
  });

  it('a publishing failure never changes what happened to the email', async () => {
    const id = newEmailId();
    await emails.create({ id, created_at: new Date().toISOString(), content: emailContent() });
    const broken = {
      subscriptions: async () => ({
        wants: () => true,
        publish: async () => Promise.reject(new Error('SQS down')),
      }),
    };
    const result = await deliverEmail(
      { emails, mailer: new ScriptedMailer(['ses-7']), clock: { now: () => new Date() }, events: broken },
      { id, content: emailContent() },
      false,
    );
    expect(result).toMatchObject({ result: 'sent', messageId: 'ses-7' });
    expect((await emails.getState(id))?.sent_at).toBeDefined();
  });
});

describe('events raised by the domain functions', () => {
  it('domain.created when added, domain.updated when its status changes, nothing when it does not', async () => {
    const domains = new DynamoDomainRepository(table.db, table.tableName);
    let status: 'pending' | 'verified' = 'pending';
    const identities = {
      create: async () => ({ status, sendable: false, records: [] }),
      get: async () => ({ status, sendable: status === 'verified', records: [] }),
      delete: async () => undefined,
    };
    const deps = {
      domains,
      identities,
      clock: { now: () => new Date() },
      events: publisher,
      region: 'eu-west-1',
    };
    const domain = await createDomain(deps, 'hooks.test');
    await getDomain(deps, domain.id);
    status = 'verified';
    await getDomain(deps, domain.id);
    await getDomain(deps, domain.id);
    const raised = take();
    expect(raised.map((d) => [d.webhook_id, d.type, d.event.data.status])).toEqual([
      ['wh_domains', 'domain.created', 'pending'],
      ['wh_domains', 'domain.updated', 'verified'],
    ]);
    expect(raised[0]?.event.data).toMatchObject({
      id: domain.id,
      name: 'hooks.test',
      region: 'eu-west-1',
      records: [],
    });
  });
});
