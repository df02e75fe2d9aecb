import { SESv2Client } from '@aws-sdk/client-sesv2';
import {
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newSesSendClient } from '../../functions/adapters/aws-clients.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { SesIdentities } from '../../functions/adapters/ses/identities.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import { SesSuppressions } from '../../functions/adapters/ses/suppressions.js';
import { type Mailer, MailerError } from '../../functions/emails/ports.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';
import { startPoller } from '../../local/sqs-poller.js';
import { sqsEvent } from '../support/events.js';
import { emailContent, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let table: TestTable;
let emulators: Emulators;
let standIn: SesStandIn;
let sqs: SQSClient;
let eventsQueue: { url: string; arn: string };
let emails: DynamoEmailRepository;
let mailer: SesMailer;
let identities: SesIdentities;

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  emulators = await startEmulators({ sesPort: 0 });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  eventsQueue = (await ensureQueueWithDlq(sqs, 'events', { maxReceiveCount: 3, visibilityTimeoutSeconds: 1 }))
    .queue;
  standIn = await startSesStandIn({
    emulatorEndpoint: emulators.sesEndpoint,
    sqs,
    eventsQueueUrl: eventsQueue.url,
    eventDelayMs: 20,
    identities: { verifyAfterMs: 0 },
    // The stack's configuration set, which SendEmail names.
    configurationSets: { stack: ['test-set'] },
  });
  const sesClient = new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials });
  mailer = new SesMailer(sesClient, 'test-set');
  // As on AWS, SES sends only from a verified identity.
  identities = new SesIdentities(sesClient, { region: 'us-east-1', owner: 'test-table' });
  await identities.create('acme.test', 'send.acme.test');
});
afterAll(async () => {
  await standIn.stop();
  await emulators.stop();
  await table.stop();
});
beforeEach(async () => {
  await fetch(`${emulators.sesEndpoint}/clear-store`, { method: 'POST' });
  await sqs.send(new PurgeQueueCommand({ QueueUrl: eventsQueue.url }));
});

const content = (to: string[]) =>
  emailContent({ from: 'Acme <hello@acme.test>', to, subject: 'Pipeline', html: '<p>Hi</p>', text: 'Hi' });

async function queued(to = ['success@simulator.amazonses.com']) {
  const id = newEmailId();
  await emails.create({ id, created_at: new Date().toISOString(), content: content(to) });
  return { id, body: JSON.stringify({ id, content: content(to) }) };
}

/** What the SES emulator received, for one of our emails (matched on the subject and recipients). */
async function sesStore(): Promise<{ messageId: string; destination: { to: string[] } }[]> {
  const response = await fetch(`${emulators.sesEndpoint}/store`);
  return ((await response.json()) as { emails: { messageId: string; destination: { to: string[] } }[] })
    .emails;
}

const consumer = (m: Mailer = mailer, maxReceiveCount = 3) =>
  makeConsumer({ emails, mailer: m, clock: systemClock, maxReceiveCount });

describe('send consumer (SQS → SES v2 emulator)', () => {
  it('sends through SES with the configuration set and our id as a message tag', async () => {
    const { id, body } = await queued();
    const result = await consumer()(sqsEvent([{ body }]));
    expect(result.batchItemFailures).toEqual([]);
    const store = await sesStore();
    expect(store).toHaveLength(1);
    const email = await emails.get(id);
    expect(email?.sent_at).not.toBeNull();
    expect(email?.status).toBe('queued'); // until SES reports delivery
  });

  it("hands SES the sender domain's options (tracking, its own set), read by the sender's domain; a failure to read them leaves the email unclaimed for the next attempt", async () => {
    const { id, body } = await queued();
    const recording = new ScriptedMailer();
    const asked: string[] = [];
    let failing = true;
    const handle = makeConsumer({
      emails,
      mailer: recording,
      clock: systemClock,
      maxReceiveCount: 3,
      senderOptions: async (domain) => {
        asked.push(domain);
        if (failing) throw new Error('ProvisionedThroughputExceededException');
        return { openTracking: true, clickTracking: true, configurationSet: 'set-of-acme' };
      },
    });
    expect((await handle(sqsEvent([{ body, messageId: 'm1' }]))).batchItemFailures).toEqual([
      { itemIdentifier: 'm1' },
    ]);
    expect((await emails.get(id))?.sent_at).toBeNull();
    failing = false;
    expect((await handle(sqsEvent([{ body, messageId: 'm1', receiveCount: 2 }]))).batchItemFailures).toEqual(
      [],
    );
    expect(asked).toEqual(['acme.test', 'acme.test']);
    expect(recording.sent.map((job) => job.sender)).toEqual([
      { openTracking: true, clickTracking: true, configurationSet: 'set-of-acme' },
    ]);
  });

  it('sends once when SQS delivers the same message twice, in one batch or in two', async () => {
    const { body } = await queued();
    const handle = consumer();
    await handle(
      sqsEvent([
        { body, messageId: 'a' },
        { body, messageId: 'b' },
      ]),
    );
    const again = await handle(sqsEvent([{ body, messageId: 'c', receiveCount: 2 }]));
    expect(again.batchItemFailures).toEqual([]);
    expect(await sesStore()).toHaveLength(1);
  });

  it('retries when SES refused without taking it (item reported, attempt released) and sends on the next attempt', async () => {
    const { id, body } = await queued();
    const flaky = new ScriptedMailer([
      new MailerError('Maximum sending rate exceeded.', 'refused', 'TooManyRequestsException'),
    ]);
    const first = await consumer(flaky)(sqsEvent([{ body, messageId: 'm1' }]));
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect((await emails.get(id))?.status).toBe('queued');
    const second = await consumer(flaky)(sqsEvent([{ body, messageId: 'm1', receiveCount: 2 }]));
    expect(second.batchItemFailures).toEqual([]);
    expect(flaky.sent).toHaveLength(1);
  });

  it('fails the email at once on a permanent SES error, without retrying', async () => {
    const { id, body } = await queued();
    const rejecting = new ScriptedMailer([
      new MailerError('Email address is not verified.', 'rejected', 'MessageRejected'),
    ]);
    const result = await consumer(rejecting)(sqsEvent([{ body }]));
    expect(result.batchItemFailures).toEqual([]);
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('MessageRejected'),
    });
  });

  it('on the last attempt, a refusal ends the email failed (the message goes to the DLQ)', async () => {
    const { id, body } = await queued();
    const down = new ScriptedMailer([new MailerError('Sending paused', 'refused', 'SendingPausedException')]);
    const result = await consumer(down, 3)(sqsEvent([{ body, messageId: 'last', receiveCount: 3 }]));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'last' }]);
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('gave up'),
    });
  });

  it('never tries again when the outcome is unknown: the message is deleted, the attempt stays on record', async () => {
    const { id, body } = await queued();
    const timedOut = new ScriptedMailer([new MailerError('socket hang up', 'unknown', 'TimeoutError')]);
    const first = await consumer(timedOut)(sqsEvent([{ body, messageId: 'u1' }]));
    expect(first.batchItemFailures).toEqual([]);
    // A duplicate delivery, even days later, finds the attempt on record and sends nothing.
    const again = await consumer(timedOut)(sqsEvent([{ body, messageId: 'u2', receiveCount: 2 }]));
    expect(again.batchItemFailures).toEqual([]);
    expect(timedOut.sent).toHaveLength(0);
    expect(await emails.getState(id)).toMatchObject({
      status: 'queued',
      send_started_at: expect.any(Number),
      attempt_error: 'TimeoutError: socket hang up',
    });
  });

  it('reports an unreadable message as failed and keeps the rest of the batch', async () => {
    const { body } = await queued();
    const result = await consumer()(
      sqsEvent([
        { body: 'not json', messageId: 'bad' },
        { body, messageId: 'good' },
      ]),
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect(await sesStore()).toHaveLength(1);
  });

  it('a poison message ends in the dead-letter queue and its email ends failed (real queue, redrive policy)', async () => {
    const { queue, dlq } = await ensureQueueWithDlq(sqs, `send-${Date.now()}`, {
      maxReceiveCount: 2,
      visibilityTimeoutSeconds: 1,
    });
    const { id, body } = await queued();
    const down = new ScriptedMailer(
      Array.from({ length: 10 }, () => new MailerError('throttled', 'refused', 'TooManyRequestsException')),
    );
    const poller = startPoller({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      functionName: 'consumer',
      handler: consumer(down, 2),
    });
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));
      const deadline = Date.now() + 15_000;
      let inDlq = 0;
      while (Date.now() < deadline) {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: dlq.url,
            AttributeNames: ['ApproximateNumberOfMessages'],
          }),
        );
        inDlq = Number(Attributes?.ApproximateNumberOfMessages ?? 0);
        if (inDlq > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(inDlq).toBe(1);
      expect((await emails.get(id))?.status).toBe('failed');
    } finally {
      await poller.stop();
    }
  });
});

describe('SES outcomes through the real SDK client (one attempt, bounded waits)', () => {
  /** A stand-in that takes every email and then answers as `fault` says; the consumer's real SES client. */
  async function faultySes(fault: 'hangAfterAccept' | 'errorAfterAccept' | 'throttle') {
    const faulty = await startSesStandIn({
      emulatorEndpoint: emulators.sesEndpoint,
      sqs,
      eventsQueueUrl: eventsQueue.url,
      eventDelayMs: 20,
      identities: { verifyAfterMs: 0 },
      // The stack's configuration set, which SendEmail names.
      configurationSets: { stack: ['test-set'] },
      faults: { ses: { [fault]: 1 } },
    });
    const client = new SESv2Client({ endpoint: faulty.endpoint, region: 'us-east-1', credentials });
    await new SesIdentities(client, { region: 'us-east-1', owner: 'test-table' }).create(
      'acme.test',
      'send.acme.test',
    );
    client.destroy();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SESV2: faulty.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    const real = new SesMailer(newSesSendClient({ connectMs: 500, requestMs: 800 }), 'test-set');
    return { standIn: faulty, mailer: real };
  }

  it.each([
    ['takes it and never answers (a timeout after acceptance)', 'hangAfterAccept'],
    ['takes it and answers 500', 'errorAfterAccept'],
  ] as const)(
    'when SES %s: one SendEmail, no retry, and its Send event marks the email sent',
    async (_, fault) => {
      const { standIn: faulty, mailer: real } = await faultySes(fault);
      try {
        const { id, body } = await queued();
        const handle = consumer(real);
        const first = await handle(sqsEvent([{ body, messageId: 'f1' }]));
        expect(first.batchItemFailures).toEqual([]); // deleted: never tried again blindly
        await handle(sqsEvent([{ body, messageId: 'f2', receiveCount: 2 }])); // SQS delivers it again
        expect(faulty.ledger.forwardCounts().get(id)).toBe(1);
        const waiting = await emails.getState(id);
        expect(waiting).toMatchObject({ status: 'queued', send_started_at: expect.any(Number) });
        expect(waiting?.sent_at).toBeUndefined();
        // SES published Send when it took the email: the events consumer records it as sent.
        await faulty.idle();
        const events = makeEventsConsumer({ emails });
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: eventsQueue.url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
          }),
        );
        await events(sqsEvent(Messages.map((m) => ({ body: m.Body ?? '' }))));
        expect(await emails.getState(id)).toMatchObject({ sent_at: expect.any(String) });
      } finally {
        await faulty.stop();
      }
    },
  );

  it('when SES throttles: not taken, the attempt is released and the message retried', async () => {
    const { standIn: faulty, mailer: real } = await faultySes('throttle');
    try {
      const { id, body } = await queued();
      const result = await consumer(real)(sqsEvent([{ body, messageId: 't1' }]));
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 't1' }]);
      expect(faulty.ledger.forwardCounts().get(id)).toBeUndefined();
      expect((await emails.getState(id))?.send_started_at).toBeUndefined();
    } finally {
      await faulty.stop();
    }
  });
});

describe('local SES identities (the stand-in for the API the emulator lacks)', () => {
  it('answers the SES identity calls in SES shapes: create (idempotent for our own), get, delete', async () => {
    const created = await identities.create('identity.example', 'send.identity.example');
    expect(created.records.map((r) => `${r.record} ${r.type}`)).toEqual([
      'DKIM CNAME',
      'DKIM CNAME',
      'DKIM CNAME',
      'SPF MX',
      'SPF TXT',
    ]);
    expect(created.records[0]?.name).toMatch(/^[a-z2-7]{32}\._domainkey\.identity\.example$/);
    expect(created.records[3]).toMatchObject({
      name: 'send.identity.example',
      value: 'feedback-smtp.us-east-1.amazonses.com',
    });
    // verifyAfterMs 0: verified as soon as it is read.
    expect(await identities.get('identity.example', 'send.identity.example')).toMatchObject({
      status: 'verified',
      sendable: true,
    });
    // Ours (owner tag): adopted, same tokens. Someone else's: refused.
    expect((await identities.create('identity.example', 'send.identity.example')).records[0]?.name).toBe(
      created.records[0]?.name,
    );
    const stranger = new SesIdentities(
      new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials }),
      { region: 'us-east-1', owner: 'another-stack' },
    );
    await expect(stranger.create('identity.example', 'send.identity.example')).rejects.toMatchObject({
      reason: 'exists',
    });
    await identities.delete('identity.example');
    expect(await identities.get('identity.example', 'send.identity.example')).toBeNull();
    await identities.delete('identity.example');
  });

  it('refuses to send from a domain that is not a verified identity, as SES does: the email fails for good', async () => {
    const id = newEmailId();
    const from = { ...content(['success@simulator.amazonses.com']), from: 'someone@unverified.example' };
    await emails.create({ id, created_at: new Date().toISOString(), content: from });
    const consumer = makeConsumer({ emails, mailer, clock: systemClock, maxReceiveCount: 5 });
    const result = await consumer(sqsEvent([{ body: JSON.stringify({ id, content: from }) }]));
    expect(result.batchItemFailures).toEqual([]);
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('Email address is not verified'),
    });
  });
});

describe('SES events (local stand-in → events queue → events consumer)', () => {
  async function sendAndSettle(to: string[]) {
    const { id, body } = await queued(to);
    await consumer()(sqsEvent([{ body }]));
    await standIn.idle();
    const events = makeEventsConsumer({ emails });
    const poller = startPoller({
      sqs,
      queueUrl: eventsQueue.url,
      queueArn: eventsQueue.arn,
      functionName: 'events',
      handler: events,
    });
    // Drain the events queue.
    for (let i = 0; i < 20; i++) {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: eventsQueue.url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      if (
        Attributes?.ApproximateNumberOfMessages === '0' &&
        Attributes?.ApproximateNumberOfMessagesNotVisible === '0'
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await poller.idle();
    await poller.stop();
    return emails.get(id);
  }

  it.each([
    [['success@simulator.amazonses.com'], 'delivered', ['delivered']],
    [['bounce@simulator.amazonses.com'], 'bounced', ['bounced']],
    [['suppressionlist@simulator.amazonses.com'], 'bounced', ['bounced']],
    [['complaint@simulator.amazonses.com'], 'delivered', ['delivered', 'complained']],
    [['ooto+label@simulator.amazonses.com'], 'delivered', ['delivered']],
  ])('%j ends %s', async (to, status, types) => {
    const email = await sendAndSettle(to);
    expect(email?.status).toBe(status);
    expect(email?.events.map((e) => e.type)).toEqual(types);
  });

  it('settles an email to several recipients once each has an outcome, each recipient with its own', async () => {
    // A label of its own: the stand-in's SES account list already holds bounce@ from above.
    const email = await sendAndSettle([
      'success@simulator.amazonses.com',
      'bounce+multi@simulator.amazonses.com',
    ]);
    const bounced = email?.events.find((e) => e.type === 'bounced');
    const delivered = email?.events.find((e) => e.type === 'delivered');
    expect(bounced?.recipients).toEqual(['bounce+multi@simulator.amazonses.com']);
    expect(bounced?.detail).toContain('550 5.1.1');
    expect(delivered?.recipients).toEqual(['success@simulator.amazonses.com']);
    expect(email).toMatchObject({
      status: 'bounced',
      last_event: 'bounced',
      failure_reason: 'did not reach 1 of 2 recipients (bounced or suppressed; see recipients)',
    });
    expect(email?.recipients).toEqual([
      {
        email: 'success@simulator.amazonses.com',
        kind: 'to',
        status: 'delivered',
        last_event: 'delivered',
        at: delivered?.at,
        detail: '250 2.6.0 Message received',
      },
      {
        email: 'bounce+multi@simulator.amazonses.com',
        kind: 'to',
        status: 'bounced',
        last_event: 'bounced',
        at: bounced?.at,
        detail: expect.stringContaining('550 5.1.1'),
        bounce: { type: 'Permanent', subType: 'General' },
      },
    ]);
  });

  it("bounces a send to an address on SES's account-level list, until it is taken off", async () => {
    const address = 'bounce+account@simulator.amazonses.com';
    expect((await sendAndSettle([address]))?.recipients[0]?.bounce?.subType).toBe('General');
    // SES put it on its account list: the next send bounces without being tried.
    expect((await sendAndSettle([address]))?.recipients[0]?.bounce?.subType).toBe('OnAccountSuppressionList');
    const ses = new SesSuppressions(
      new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials }),
    );
    await ses.remove(address);
    await ses.remove(address); // not there any more: no error
    expect((await sendAndSettle([address]))?.recipients[0]?.bounce?.subType).toBe('General');
  });
});
