/**
 * The send gate (issue 40, item 6): an email with `topic_id` goes to no recipient whose choice for
 * the topic keeps it out, judged when it is handed to SES; each recipient gets its own message with
 * its own one-click unsubscribe link. Through the official SDK's emails.send and batch.send (topicId)
 * against the send handlers, then the send consumer with SQS event shapes, the table on dynalite and
 * the local SES stand-in.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { PurgeQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Resend } from 'resend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  choiceItem,
  contactIdItem,
  contactItem,
  topicItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { SesIdentities } from '../../functions/adapters/ses/identities.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import type { Contact, Subscription, Topic } from '../../functions/contacts/contact.js';
import type { AudienceReads } from '../../functions/contacts/reads.js';
import { EACH_BACKOFF_MS, EACH_TRIES } from '../../functions/emails/deliver-gate.js';
import { sendEmailSchema } from '../../functions/emails/email.js';
import { type Mailer, MailerError, type SendJob } from '../../functions/emails/ports.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { makeHandler as makeGetEmail } from '../../functions/handlers/get-email.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { makeHandler as makeSendBatch } from '../../functions/handlers/send-batch.js';
import { makeHandler as makeSendEmail } from '../../functions/handlers/send-email.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import type { Clock } from '../../functions/shared/ports.js';
import type { UnsubscribeLinkInput, UnsubscribeLinks } from '../../functions/unsubscribe/links.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';
import { context, httpEvent, sqsEvent } from '../support/events.js';
import { fullAccessKey, RecordingQueue, ScriptedMailer } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let table: TestTable;
let emulators: Emulators;
let standIn: SesStandIn;
let sqs: SQSClient;
let eventsQueue: { url: string };
let repos: ReturnType<typeof createRepositories>;
let audience: DynamoAudienceReads;
let mailer: SesMailer;
let token: string;
let server: Server;
let baseUrl: string;
const queue = new RecordingQueue();
let nowMs = Date.now();
const clock: Clock = { now: () => new Date(nowMs) };
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A stand-in for the unsubscribe links (their token is the unsubscribe concept's): one per recipient. */
const asked: UnsubscribeLinkInput[] = [];
const links: UnsubscribeLinks = {
  url: async (input) => {
    asked.push(input);
    return `https://mail.acme.test/unsubscribe/${encodeURIComponent(input.address)}.${input.topicId}.${input.emailId}`;
  },
};

const consumer = (over: Partial<Parameters<typeof makeConsumer>[0]> = {}) =>
  makeConsumer({
    emails: repos.emails,
    mailer,
    clock,
    maxReceiveCount: 3,
    audience,
    unsubscribeLinks: links,
    ...over,
  });

async function put(items: Record<string, unknown>[]) {
  for (let i = 0; i < items.length; i += 25)
    await table.db.send(
      new BatchWriteCommand({
        RequestItems: { [table.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
}

async function newTopic(default_subscription: Subscription): Promise<Topic> {
  const at = new Date(nowMs).toISOString();
  const topic: Topic = {
    id: newUuid(),
    name: `News ${default_subscription}`,
    description: null,
    default_subscription,
    visibility: 'public',
    created_at: at,
    updated_at: at,
  };
  await put([topicItem(topic)]);
  return topic;
}

async function newContact(email: string, over: Partial<Contact> = {}): Promise<Contact> {
  const at = new Date(nowMs).toISOString();
  const contact: Contact = {
    id: newUuid(),
    email,
    first_name: null,
    last_name: null,
    unsubscribed: false,
    props: {},
    created_at: at,
    updated_at: at,
    ...over,
  };
  await put([contactItem(contact), contactIdItem(contact)]);
  return contact;
}

const choose = (contact: Contact, topic: Topic, subscription: Subscription) =>
  put([
    choiceItem({
      contact_id: contact.id,
      topic_id: topic.id,
      subscription,
      updated_at: new Date(nowMs).toISOString(),
    }),
  ]);

interface Stored {
  messageId: string;
  destination: { to: string[]; cc: string[]; bcc: string[] };
  subject: string;
  headers?: { name: string; value: string }[];
}
async function sesStore(subject: string): Promise<Stored[]> {
  const response = await fetch(`${emulators.sesEndpoint}/store`);
  return ((await response.json()) as { emails: Stored[] }).emails.filter((e) => e.subject === subject);
}

/** What the send handlers queued since `from`, as the send queue's messages. */
const messages = (from: number) =>
  queue.jobs
    .slice(from)
    .map((job, i) => ({ body: toQueueMessage(job as SendJob), messageId: `m-${from + i}` }));

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  audience = new DynamoAudienceReads(table.db, table.tableName);
  token = await fullAccessKey(repos.apiKeys);
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
    configurationSets: { stack: ['test-set'] },
  });
  const sesClient = new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials });
  mailer = new SesMailer(sesClient, 'test-set');
  await new SesIdentities(sesClient, { region: 'us-east-1', owner: 'test-table' }).create(
    'acme.test',
    'send.acme.test',
  );
  // The official SDK, over HTTP, against the send handlers (answers as API Gateway gives them).
  const deps = {
    ...repos,
    queue,
    clock,
    log,
    rateLimit: { perSecond: 100 },
    assertSenderDomain: async () => undefined,
  };
  const single = makeSendEmail(deps);
  const batch = makeSendBatch(deps);
  const read = makeGetEmail(deps);
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      const isBatch = (req.url ?? '').endsWith('/batch');
      const id = req.method === 'GET' ? /\/v1\/emails\/([^/?]+)/.exec(req.url ?? '')?.[1] : undefined;
      const event = httpEvent({
        method: req.method ?? 'POST',
        path: req.url ?? '',
        routeKey: id ? 'GET /v1/emails/{id}' : isBatch ? 'POST /v1/emails/batch' : 'POST /v1/emails',
        token: null,
        headers: Object.fromEntries(
          Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
        ),
        body: body || undefined,
        ...(id ? { pathParameters: { id } } : {}),
      });
      const handler = id ? read : isBatch ? batch : single;
      const answer = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
      res.writeHead(answer.statusCode ?? 500, answer.headers as Record<string, string>);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await standIn?.stop();
  await emulators?.stop();
  await table?.stop();
});
beforeEach(async () => {
  nowMs = Date.now();
  asked.length = 0;
  await sqs.send(new PurgeQueueCommand({ QueueUrl: eventsQueue.url }));
});

describe('the send gate (topic_id)', () => {
  it("sends to the recipients the topic's choices let it reach, each its own message and link; the others' outcomes say why", async () => {
    const optOutTopic = await newTopic('opt_out');
    const optInTopic = await newTopic('opt_in');
    const tag = newUuid().slice(-8);
    const address = (name: string) => `${name}-${tag}@example.test`;
    const fan = await newContact(address('Fan'));
    await choose(fan, optOutTopic, 'opt_in');
    const leaver = await newContact(address('leaver'));
    await choose(leaver, optOutTopic, 'opt_out');
    await choose(leaver, optInTopic, 'opt_out');
    // Unsubscribed from everything: withheld even though opted in to the topic.
    const gone = await newContact(address('gone'), { unsubscribed: true });
    await choose(gone, optOutTopic, 'opt_in');

    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'Acme <news@acme.test>',
      // The contact's address in another case: contacts are compared case-insensitively.
      to: [`Fan <${address('FAN')}>`, address('leaver')],
      cc: [address('gone')],
      bcc: [address('stranger')],
      subject: `Gate ${tag}`,
      text: 'News',
      headers: { 'X-Campaign': 'autumn' },
      topicId: optOutTopic.id,
    });
    expect(sent.error).toBeNull();
    const batch = await resend.batch.send([
      {
        from: 'Acme <news@acme.test>',
        to: [address('newcomer'), address('leaver')],
        subject: `Gate in ${tag}`,
        text: 'News',
        topicId: optInTopic.id,
      },
    ]);
    expect(batch.error).toBeNull();
    const result = await consumer()(sqsEvent(messages(from)));
    expect(result.batchItemFailures).toEqual([]);

    // Under the opt_out topic: only the contact opted in.
    const out = await sesStore(`Gate ${tag}`);
    expect(out.map((m) => m.destination)).toEqual([{ to: [`Fan <${address('FAN')}>`], cc: [], bcc: [] }]);
    const url = `https://mail.acme.test/unsubscribe/${encodeURIComponent(address('fan'))}.${optOutTopic.id}.${sent.data?.id}`;
    // RFC 8058: List-Unsubscribe first, then List-Unsubscribe-Post, then the headers given.
    expect(out[0]?.headers).toEqual([
      { name: 'List-Unsubscribe', value: `<${url}>` },
      { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
      { name: 'X-Campaign', value: 'autumn' },
    ]);
    const email = await repos.emails.get(sent.data?.id as string);
    expect(email).toMatchObject({ topic_id: optOutTopic.id, sent_at: expect.any(String) });
    expect(email?.recipients.map((r) => [r.email, r.status, r.suppressed?.reason])).toEqual([
      [address('fan'), 'queued', undefined],
      [address('leaver'), 'suppressed', 'topic_opted_out'],
      [address('gone'), 'suppressed', 'unsubscribed'],
      [address('stranger'), 'suppressed', 'topic_default_opt_out'],
    ]);

    // Under the opt_in topic: a recipient without a contact gets it, one opted out does not.
    const inTopic = await sesStore(`Gate in ${tag}`);
    expect(inTopic.map((m) => m.destination.to)).toEqual([[address('newcomer')]]);
    const batchEmail = await repos.emails.get(batch.data?.data[0]?.id as string);
    expect(batchEmail?.recipients.map((r) => [r.status, r.suppressed?.reason])).toEqual([
      ['queued', undefined],
      ['suppressed', 'topic_opted_out'],
    ]);
  });

  it('gives every recipient its own message and link, one per address', async () => {
    const topic = await newTopic('opt_in');
    const tag = newUuid().slice(-8);
    const to = ['a', 'b', 'c'].map((n) => `${n}-${tag}@example.test`);
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'news@acme.test',
      to,
      // Twice: one message all the same.
      cc: [to[0] as string],
      subject: `Each ${tag}`,
      html: '<p>News</p>',
      topicId: topic.id,
    });
    await consumer()(sqsEvent(messages(from)));
    const stored = await sesStore(`Each ${tag}`);
    expect(stored.map((m) => m.destination.to[0]).sort()).toEqual([...to].sort());
    for (const message of stored) {
      const recipient = message.destination.to[0] as string;
      expect(message.headers?.[0]).toEqual({
        name: 'List-Unsubscribe',
        value: `<https://mail.acme.test/unsubscribe/${encodeURIComponent(recipient)}.${topic.id}.${sent.data?.id}>`,
      });
    }
    expect(asked.map((a) => a.address).sort()).toEqual([...to].sort());
    const email = await repos.emails.get(sent.data?.id as string);
    expect(email?.message_id).toBe(stored.find((m) => m.messageId === email?.message_id)?.messageId);
  });

  it('withholds a scheduled email from a contact who opted out after it was accepted, before it was due', async () => {
    const topic = await newTopic('opt_in');
    const tag = newUuid().slice(-8);
    const reader = await newContact(`reader-${tag}@example.test`);
    const keeper = `keeper-${tag}@example.test`;
    const id = newEmailId();
    const due = nowMs + 3_600_000;
    await repos.emails.create({
      id,
      created_at: new Date(nowMs).toISOString(),
      content: {
        from: 'news@acme.test',
        to: [reader.email, keeper],
        cc: [],
        bcc: [],
        reply_to: [],
        subject: `Later ${tag}`,
        html: null,
        text: 'Later',
        tags: [],
        headers: {},
        topic_id: topic.id,
      },
      schedule: { at: new Date(due).toISOString(), key_id: 'key_1', dispatched: true },
    });
    // Accepted while the reader was subscribed (the topic's default); opted out before it was due.
    await choose(reader, topic, 'opt_out');
    nowMs = due + 1_000;
    const body = JSON.stringify({ id, content: null, key_id: 'key_1' });
    expect((await consumer()(sqsEvent([{ body }]))).batchItemFailures).toEqual([]);
    expect((await sesStore(`Later ${tag}`)).map((m) => m.destination.to)).toEqual([[keeper]]);
    expect((await repos.emails.get(id))?.recipients.map((r) => r.suppressed?.reason)).toEqual([
      'topic_opted_out',
      undefined,
    ]);
  });

  it('ends an email whose every recipient is withheld as an all-suppressed email ends, SES never called; a deleted topic withholds all', async () => {
    const tag = newUuid().slice(-8);
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'news@acme.test',
      to: [`one-${tag}@example.test`, `two-${tag}@example.test`],
      subject: `Nobody ${tag}`,
      text: 'News',
      // A topic that does not exist (or was deleted since): nobody's choice for it can be known.
      topicId: newUuid(),
    });
    await consumer()(sqsEvent(messages(from)));
    expect(await sesStore(`Nobody ${tag}`)).toEqual([]);
    const email = await repos.emails.get(sent.data?.id as string);
    expect(email).toMatchObject({
      status: 'bounced',
      failure_reason: expect.stringContaining('topic_deleted'),
    });
    expect(email?.recipients.map((r) => r.suppressed?.reason)).toEqual(['topic_deleted', 'topic_deleted']);
  });

  it('reads nothing of the audience, and asks for no link, for an email without topic_id', async () => {
    const tag = newUuid().slice(-8);
    const refusing = new Proxy({} as AudienceReads, {
      get: () => () => Promise.reject(new Error('no audience read for an email without topic_id')),
    });
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    await resend.emails.send({
      from: 'news@acme.test',
      to: [`plain-${tag}@example.test`, `other-${tag}@example.test`],
      subject: `Plain ${tag}`,
      text: 'Hi',
      headers: { 'List-Unsubscribe': '<https://acme.test/u>' },
    });
    expect((await consumer({ audience: refusing })(sqsEvent(messages(from)))).batchItemFailures).toEqual([]);
    const stored = await sesStore(`Plain ${tag}`);
    // One message to both, with the List-Unsubscribe given, as before.
    expect(stored.map((m) => m.destination.to)).toEqual([
      [`plain-${tag}@example.test`, `other-${tag}@example.test`],
    ]);
    expect(stored[0]?.headers).toEqual([{ name: 'List-Unsubscribe', value: '<https://acme.test/u>' }]);
    expect(asked).toEqual([]);
  });

  it('leaves an email with topic_id unclaimed when its links cannot be made (retried, never sent without one)', async () => {
    const topic = await newTopic('opt_in');
    const tag = newUuid().slice(-8);
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'news@acme.test',
      to: `later-${tag}@example.test`,
      subject: `Keys ${tag}`,
      text: 'Hi',
      topicId: topic.id,
    });
    const broken: UnsubscribeLinks = { url: () => Promise.reject(new Error('the keys cannot be read')) };
    const [message] = messages(from);
    const failed = await consumer({ unsubscribeLinks: broken })(sqsEvent([message as { body: string }]));
    expect(failed.batchItemFailures).toHaveLength(1);
    expect(await repos.emails.getState(sent.data?.id as string)).not.toHaveProperty('send_started_at');
    expect(await sesStore(`Keys ${tag}`)).toEqual([]);
    await consumer()(sqsEvent([{ ...(message as { body: string }), receiveCount: 2 }]));
    expect(await sesStore(`Keys ${tag}`)).toHaveLength(1);
  });
});

describe('what a withheld recipient raises', () => {
  it('keeps a listed recipient its suppression-list reason and raises email.suppressed for it alone, none for the withheld', async () => {
    const topic = await newTopic('opt_out');
    const tag = newUuid().slice(-8);
    const listed = `listed-${tag}@example.test`;
    const stranger = `stranger-${tag}@example.test`;
    const published: { type: string; data: { to?: string[]; suppressed?: { reason: string } } }[] = [];
    const events = {
      subscriptions: async () => ({
        wants: () => true,
        publish: async (raised: unknown[]) => void published.push(...(raised as typeof published)),
      }),
    };
    const suppressions = {
      find: async (emails: string[]) =>
        new Map(
          emails
            .filter((e) => e === listed)
            .map((email) => [
              email,
              {
                id: 'sup_1',
                email,
                origin: 'bounce' as const,
                source_id: null,
                created_at: '2026-11-01T00:00:00Z',
              },
            ]),
        ),
    };
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'news@acme.test',
      to: [listed, stranger],
      subject: `Raised ${tag}`,
      text: 'Hi',
      topicId: topic.id,
    });
    await consumer({ events, suppressions })(sqsEvent(messages(from)));
    const email = await repos.emails.get(sent.data?.id as string);
    expect(email?.recipients.map((r) => r.suppressed?.reason)).toEqual([
      'previous_bounce',
      'topic_default_opt_out',
    ]);
    expect(published.map((e) => [e.type, e.data.to, e.data.suppressed?.reason])).toEqual([
      ['email.suppressed', [listed], 'previous_bounce'],
    ]);
  });
});

describe('how an email with a withheld recipient settles', () => {
  it('settles delivered once the others are delivered: a recipient withheld by its choice is no bounce', async () => {
    const topic = await newTopic('opt_in');
    const tag = newUuid().slice(-8);
    const leaver = await newContact(`leaver+${tag}@simulator.amazonses.com`);
    await choose(leaver, topic, 'opt_out');
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'news@acme.test',
      to: [`success+${tag}@simulator.amazonses.com`, leaver.email],
      subject: `Settle ${tag}`,
      text: 'Hi',
      topicId: topic.id,
    });
    const id = sent.data?.id as string;
    await consumer()(sqsEvent(messages(from)));
    await standIn.idle();
    const events = makeEventsConsumer({ emails: repos.emails });
    // SES's events for the one message sent (Send, Delivery), as the events queue hands them over.
    for (let round = 0; round < 20 && (await repos.emails.getState(id))?.status === 'queued'; round++) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: eventsQueue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length) await events(sqsEvent(Messages.map((m) => ({ body: m.Body ?? '' }))));
    }
    const email = await repos.emails.get(id);
    expect(email?.status).toBe('delivered');
    expect(email?.recipients.map((r) => [r.status, r.suppressed?.reason])).toEqual([
      ['delivered', undefined],
      ['suppressed', 'topic_opted_out'],
    ]);
  });
});

describe('one message per recipient, under one claim', () => {
  async function topicEmail(to: string[]) {
    const topic = await newTopic('opt_in');
    const resend = new Resend(token, { baseUrl });
    const from = queue.jobs.length;
    const sent = await resend.emails.send({
      from: 'news@acme.test',
      to,
      subject: 'Claim',
      text: 'Hi',
      topicId: topic.id,
    });
    return { id: sent.data?.id as string, message: messages(from)[0] as { body: string; messageId: string } };
  }

  it('retries the email when SES refuses its first message (SES took none of it), and sends each once then', async () => {
    const tag = newUuid().slice(-8);
    const { id, message } = await topicEmail([`a-${tag}@example.test`, `b-${tag}@example.test`]);
    const refusing = new ScriptedMailer([new MailerError('Access denied', 'refused', 'AccessDenied')]);
    const first = await consumer({ mailer: refusing })(sqsEvent([message]));
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: message.messageId }]);
    expect(refusing.sent).toEqual([]);
    expect((await repos.emails.get(id))?.sent_at).toBeNull();
    const again = await consumer({ mailer: refusing })(sqsEvent([{ ...message, receiveCount: 2 }]));
    expect(again.batchItemFailures).toEqual([]);
    expect(refusing.sent.map((job) => job.content.to)).toEqual([
      [`a-${tag}@example.test`],
      [`b-${tag}@example.test`],
    ]);
  });

  it('once SES took the first message, retries one it throttled after a backoff (never one it took), each once', async () => {
    const tag = newUuid().slice(-8);
    const to = ['a', 'b', 'c'].map((n) => `${n}-${tag}@example.test`);
    const { id, message } = await topicEmail(to);
    const throttle = () =>
      new MailerError('Maximum sending rate exceeded.', 'rate', 'TooManyRequestsException');
    // Calls in order: a; b throttled, b again; c throttled, c again.
    const halfway = new ScriptedMailer(['ses-first', throttle(), 'ses-b', throttle(), 'ses-c']);
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    const result = await consumer({ mailer: halfway, sleep })(sqsEvent([message]));
    expect(result.batchItemFailures).toEqual([]);
    expect(halfway.sent.map((job) => job.content.to)).toEqual(to.map((address) => [address]));
    expect(waits.filter((ms) => ms >= EACH_BACKOFF_MS)).toHaveLength(2);
    const email = await repos.emails.get(id);
    expect(email).toMatchObject({ message_id: 'ses-first', sent_at: expect.any(String), status: 'queued' });
    expect(email?.recipients.map((r) => r.status)).toEqual(['queued', 'queued', 'queued']);
    // A second delivery of the message finds the email sent: nobody gets a second copy.
    await consumer({ mailer: halfway, sleep })(sqsEvent([{ ...message, receiveCount: 2 }]));
    expect(halfway.sent).toHaveLength(3);
  });

  it('records a recipient SES never took (throttled on every try, or rejected) as failed with why, and the email settles', async () => {
    const tag = newUuid().slice(-8);
    const to = ['a', 'b', 'c', 'd'].map((n) => `success+${n}${tag}@simulator.amazonses.com`);
    const topic = await newTopic('opt_in');
    const from = queue.jobs.length;
    const sent = await new Resend(token, { baseUrl }).emails.send({
      from: 'news@acme.test',
      to,
      subject: `Unsent ${tag}`,
      text: 'Hi',
      topicId: topic.id,
    });
    const id = sent.data?.id as string;
    // b always throttled, c rejected for good; a and d go to SES (its stand-in) and are delivered.
    const calls: string[] = [];
    const refusing: Mailer = {
      send: async (job) => {
        const address = job.content.to[0] as string;
        calls.push(address);
        if (address === to[1])
          throw new MailerError('Maximum sending rate exceeded.', 'rate', 'TooManyRequestsException');
        if (address === to[2]) throw new MailerError('Address blacklisted.', 'rejected', 'MessageRejected');
        return mailer.send(job);
      },
    };
    const sleep = async () => undefined;
    await consumer({ mailer: refusing, sleep })(sqsEvent(messages(from)));
    expect(calls.filter((address) => address === to[1])).toHaveLength(EACH_TRIES);
    expect(calls.filter((address) => address === to[2])).toHaveLength(1);
    await standIn.idle();
    const events = makeEventsConsumer({ emails: repos.emails });
    for (let round = 0; round < 20 && (await repos.emails.getState(id))?.status === 'queued'; round++) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: eventsQueue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length) await events(sqsEvent(Messages.map((m) => ({ body: m.Body ?? '' }))));
    }
    const email = await repos.emails.get(id);
    expect(email?.status).toBe('bounced');
    expect(email?.failure_reason).toContain('2 of 4');
    expect(email?.recipients.map((r) => r.status)).toEqual(['delivered', 'failed', 'failed', 'delivered']);
    expect(email?.recipients[1]).toMatchObject({
      last_event: 'failed',
      detail: expect.stringContaining(
        `TooManyRequestsException: Maximum sending rate exceeded. (${EACH_TRIES} tries)`,
      ),
    });
    expect(email?.recipients[2]?.detail).toContain('MessageRejected: Address blacklisted. (1 try)');
  });
});

describe('topic_id on a send request', () => {
  const base = { from: 'news@acme.test', to: 'a@example.test', subject: 'Hi', text: 'Hi' };

  it("refuses a List-Unsubscribe given beside topic_id (the service sets each recipient's), and more headers than leave room for it", async () => {
    const resend = new Resend(token, { baseUrl });
    const refused = await resend.emails.send({
      ...base,
      topicId: newUuid(),
      headers: { 'list-unsubscribe': '<https://acme.test/u>' },
    });
    expect(refused.error?.message).toContain('list-unsubscribe is set by the service');
    const many = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`X-H${i}`, 'v']));
    expect(sendEmailSchema.safeParse({ ...base, topic_id: newUuid(), headers: many }).success).toBe(false);
    expect(sendEmailSchema.safeParse({ ...base, headers: many }).success).toBe(true);
  });

  it('refuses a topic_id that is not a topic id, and shows the one given on the email', async () => {
    const resend = new Resend(token, { baseUrl });
    const refused = await resend.emails.send({ ...base, topicId: 'newsletter' });
    expect(refused.error?.message).toContain("topic_id must be a topic's id");
    const topicId = newUuid();
    const sent = await resend.emails.send({ ...base, topicId: topicId.toUpperCase() });
    // Stored lower-case, and shown by GET /v1/emails/{id} (the SDK's GetEmailResponse has topic_id).
    const got = await resend.emails.get(sent.data?.id as string);
    expect(got.data?.topic_id).toBe(topicId);
    expectResendShape(got.data, 'Email');
  });
});
