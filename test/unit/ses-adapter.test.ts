import { readFileSync } from 'node:fs';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { fromSesEvent, type SesEvent } from '../../functions/adapters/ses/events.js';
import { SesMailer, toSesAddress } from '../../functions/adapters/ses/mailer.js';
import { newEmailId } from '../../functions/core/ids.js';
import { MailerError } from '../../functions/core/ports.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { sqsEvent } from '../support/events.js';
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

const content = {
  from: '"Acme" <hello@acme.com>',
  to: ['a@example.com'],
  cc: ['c@example.com'],
  bcc: [],
  reply_to: ['r@example.com'],
  subject: 'Hi',
  html: '<p>Hi</p>',
  text: null,
};

describe('SesMailer (SES v2 SendEmail, documented shapes)', () => {
  const ses = mockClient(SESv2Client);
  beforeEach(() => ses.reset());

  it('sends Simple content with the configuration set and the email id tag', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: '0100018c-aaaa-bbbb-cccc-000000000000-000000' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'EmailService-ConfigurationSet');
    const result = await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content });
    expect(result.messageId).toBe('0100018c-aaaa-bbbb-cccc-000000000000-000000');
    expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input).toEqual({
      FromEmailAddress: '"Acme" <hello@acme.com>',
      Destination: {
        ToAddresses: ['a@example.com'],
        CcAddresses: ['c@example.com'],
        BccAddresses: undefined,
      },
      ReplyToAddresses: ['r@example.com'],
      Content: {
        Simple: {
          Subject: { Data: 'Hi', Charset: 'UTF-8' },
          Body: { Html: { Data: '<p>Hi</p>', Charset: 'UTF-8' } },
        },
      },
      ConfigurationSetName: 'EmailService-ConfigurationSet',
      EmailTags: [{ Name: 'email_id', Value: 'em_01m80mv90eew9ryfvqd1ksnhes' }],
    });
  });

  it('encodes non-ASCII display names as RFC 2047 words, as SES requires', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'm' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'set');
    await mailer.send({
      id: 'em_01m80mv90eew9ryfvqd1ksnhes',
      content: {
        ...content,
        from: 'José Müller <jose@acme.com>',
        to: ['Plain <a@example.com>'],
        reply_to: [],
      },
    });
    const input = ses.commandCalls(SendEmailCommand)[0]?.args[0].input;
    expect(input?.FromEmailAddress).toBe(
      `=?UTF-8?B?${Buffer.from('José Müller').toString('base64')}?= <jose@acme.com>`,
    );
    expect(input?.Destination?.ToAddresses).toEqual(['Plain <a@example.com>']);
    expect(input?.ReplyToAddresses).toBeUndefined();
  });

  it('splits long non-ASCII names into encoded-words of at most 75 characters', () => {
    const name = 'Ünïcödé '.repeat(12).trim();
    const address = toSesAddress(`${name} <a@acme.com>`);
    const words = address.replace(' <a@acme.com>', '').split(' ');
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    const decoded = words.map((w) => Buffer.from(w.slice(10, -2), 'base64').toString('utf8')).join('');
    expect(decoded).toBe(name);
  });

  const error = (name: string, status: number) =>
    Object.assign(new Error(`${name} message`), { name, $metadata: { httpStatusCode: status } });

  it.each([
    ['TooManyRequestsException', 429, true],
    ['ThrottlingException', 400, true],
    ['LimitExceededException', 400, true],
    ['SendingPausedException', 400, true],
    ['AccountSuspendedException', 400, true],
    ['InternalFailure', 500, true],
    ['TimeoutError', 0, true],
    ['MessageRejected', 400, false],
    ['MailFromDomainNotVerifiedException', 400, false],
    ['BadRequestException', 400, false],
    ['NotFoundException', 404, false],
  ])('%s is retryable: %s', async (name, status, retryable) => {
    ses.on(SendEmailCommand).rejects(error(name, status));
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1', maxAttempts: 1 }), 'set');
    const failure = await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content }).catch((e) => e);
    expect(failure).toBeInstanceOf(MailerError);
    expect(failure).toMatchObject({ code: name, retryable });
  });
});

describe('fromSesEvent', () => {
  const id = newEmailId();
  it('maps each SES event type', () => {
    expect(fromSesEvent(sesEvent(id))).toEqual({
      emailId: id,
      type: 'bounced',
      at: '2026-11-22T03:20:01.123Z',
      recipients: ['bounce@simulator.amazonses.com'],
      detail: 'Permanent: General: smtp; 550 5.1.1 user unknown',
    });
    const base = (eventType: string, extra: Record<string, unknown>) =>
      fromSesEvent(
        sesEvent(id, (e) => {
          e.eventType = eventType;
          delete e.bounce;
          Object.assign(e, extra);
        }),
      );
    expect(
      base('Delivery', { delivery: { timestamp: 't', recipients: ['a@x.com'], smtpResponse: '250 ok' } }),
    ).toMatchObject({
      type: 'delivered',
      recipients: ['a@x.com'],
    });
    expect(base('Send', { send: {} })).toBeUndefined();
    expect(base('Reject', { reject: { reason: 'Bad content' } })).toMatchObject({
      type: 'failed',
      detail: expect.stringContaining('Bad content'),
    });
    expect(base('Rendering Failure', { renderingFailure: { errorMessage: 'x' } })?.type).toBe('failed');
    expect(
      base('Complaint', {
        complaint: { timestamp: 't', complainedRecipients: [{ emailAddress: 'a@x.com' }] },
      })?.type,
    ).toBe('complained');
    expect(
      base('DeliveryDelay', {
        deliveryDelay: { timestamp: 't', delayType: 'MailboxFull', delayedRecipients: [] },
      })?.type,
    ).toBe('delayed');
    expect(base('Open', { open: {} })).toBeUndefined();
    expect(base('Click', { click: {} })).toBeUndefined();
  });

  it('ignores events without our email id tag', () => {
    expect(fromSesEvent(sesEvent(id, (e) => delete e.mail.tags?.email_id))).toBeUndefined();
    expect(fromSesEvent(sesEvent('not-an-id'))).toBeUndefined();
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

  async function queuedEmail() {
    const id = newEmailId();
    await emails.create({ id, created_at: new Date().toISOString(), content });
    return id;
  }
  const deliveryOf = (id: string) =>
    sesEvent(id, (e) => {
      e.eventType = 'Delivery';
      delete e.bounce;
      e.delivery = { timestamp: '2026-11-22T03:20:05.000Z', recipients: ['a@example.com'] };
    });

  it('moves the email to bounced, once; a duplicate or a late delivery changes nothing', async () => {
    const id = await queuedEmail();
    const handler = makeEventsConsumer({ emails });
    const bounce = JSON.stringify(sesEvent(id));
    expect((await handler(sqsEvent([{ body: bounce }, { body: bounce }]))).batchItemFailures).toEqual([]);
    await handler(sqsEvent([{ body: JSON.stringify(deliveryOf(id)) }]));
    const email = await emails.get(id);
    expect(email?.status).toBe('bounced');
    expect(email?.failure_reason).toContain('550 5.1.1');
    expect(email?.events.map((e) => e.type)).toEqual(['bounced', 'delivered']);
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
