import { GetAccountCommand, SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import {
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newSesClient } from '../../functions/adapters/aws-clients.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSendPacer } from '../../functions/adapters/dynamodb/send-pacer.js';
import { SesSendQuota } from '../../functions/adapters/ses/account.js';
import { SesIdentities } from '../../functions/adapters/ses/identities.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import { SqsEmailQueue } from '../../functions/adapters/sqs/email-queue.js';
import { type Mailer, MailerError } from '../../functions/emails/ports.js';
import { parseSendJob } from '../../functions/emails/send-job.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { type ACCOUNT_READ_TIMINGS, SendingLimits } from '../../functions/shared/pacing.js';
import { type CounterName, systemClock } from '../../functions/shared/ports.js';
import { identifyCallers } from '../../local/caller-identity.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { runAs } from '../../local/invocation.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import type { SesAccountSettings } from '../../local/ses-account.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';
import { sqsEvent } from '../support/events.js';
import { emailContent, ScriptedMailer } from '../support/fakes.js';
import { waitFor } from '../support/https.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * SES's limits, as the local twin of SES enforces them (its send rate, 24-hour quota, sandbox and
 * paused sending, in SES v2's answers), and what the send consumer makes of them: a throttle, a
 * spent quota or paused sending is never a failure nor an attempt; the email waits, queued, and
 * goes when SES takes it. The real SQS emulator holds the deferred messages.
 */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let table: TestTable;
let emulators: Emulators;
let sqs: SQSClient;
let sendQueue: { url: string };
let eventsQueue: { url: string };
let emails: DynamoEmailRepository;
let standIn: SesStandIn | undefined;

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  emulators = await startEmulators({ sesPort: 0 });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  sendQueue = (await ensureQueueWithDlq(sqs, 'send', { maxReceiveCount: 5, visibilityTimeoutSeconds: 1 }))
    .queue;
  // SES's events go here, and nobody reads them: these tests look at sending only.
  eventsQueue = (await ensureQueueWithDlq(sqs, 'events', { maxReceiveCount: 5, visibilityTimeoutSeconds: 1 }))
    .queue;
});
afterEach(async () => {
  await standIn?.stop();
  standIn = undefined;
  await sqs.send(new PurgeQueueCommand({ QueueUrl: sendQueue.url }));
});
afterAll(async () => {
  await emulators.stop();
  await table.stop();
});

/** The local SES with these limits, and a verified acme.test to send from. */
async function ses(account: SesAccountSettings) {
  standIn = await startSesStandIn({
    emulatorEndpoint: emulators.sesEndpoint,
    sqs,
    eventsQueueUrl: eventsQueue.url,
    eventDelayMs: 10,
    identities: { verifyAfterMs: 0 },
    // The stack's configuration set, which SendEmail names.
    configurationSets: { stack: ['set'] },
    account,
  });
  // One attempt per call, as the consumer's SES client makes (the SDK would retry a throttle itself).
  const client = new SESv2Client({
    endpoint: standIn.endpoint,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
  });
  await new SesIdentities(client, { region: 'us-east-1', owner: 'test' }).create(
    'acme.test',
    'send.acme.test',
  );
  return { client, mailer: new SesMailer(client, 'set'), standIn };
}

async function queuedEmail(to = ['success@simulator.amazonses.com']) {
  const id = newEmailId();
  const content = emailContent({ from: 'Acme <hello@acme.test>', to });
  await emails.create({ id, created_at: new Date().toISOString(), content });
  return { id, body: JSON.stringify({ id, content }) };
}

const counted: CounterName[] = [];
const quick = {
  throttleBackoffMs: 100,
  throttleBackoffMaxMs: 2_000,
  blockedRetryMinMs: 1_000,
  blockedRetryMaxMs: 2_000,
};

/** The consumer as wired on AWS: the real queue, and (with `client`) paced at the account's limits. */
function consumer(
  mailer: Mailer,
  client?: SESv2Client,
  options: { refreshMs?: number; timings?: Partial<typeof ACCOUNT_READ_TIMINGS> } = {},
) {
  return makeConsumer({
    emails,
    mailer,
    clock: systemClock,
    maxReceiveCount: 5,
    queue: new SqsEmailQueue(sqs, sendQueue.url),
    deferTimings: quick,
    counters: { count: (name) => void counted.push(name) },
    ...(client
      ? {
          pace: {
            pacer: new DynamoSendPacer(table.db, table.tableName),
            limits: new SendingLimits(new SesSendQuota(client), {
              refreshMs: options.refreshMs ?? 60_000,
              blockedRecheckMs: 1_000,
              // One instance here: its reads need no spacing from other instances'.
              timings: { leaseMs: 0, ...options.timings },
            }),
          },
        }
      : {}),
  });
}

/** How many messages the send queue holds back for later (put back with a delay). */
async function delayedMessages() {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: sendQueue.url,
      AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Number(Attributes?.ApproximateNumberOfMessagesDelayed);
}

/** The messages put back on the send queue (waiting out their delay first). */
async function requeued(expected: number) {
  const found: ReturnType<typeof parseSendJob>[] = [];
  const deadline = Date.now() + 15_000;
  while (found.length < expected) {
    if (Date.now() > deadline) throw new Error(`only ${found.length} of ${expected} messages came back`);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: sendQueue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    found.push(...Messages.map((m) => parseSendJob(m.Body)));
  }
  return found;
}

describe('the local SES enforces the account’s limits as SES v2 answers them', () => {
  it('throttles past its send rate, counting recipients: 429 TooManyRequestsException "Maximum sending rate exceeded."', async () => {
    const { client } = await ses({ maxSendRate: 2 });
    const send = (to: string[]) =>
      client
        .send(
          new SendEmailCommand({
            FromEmailAddress: 'hello@acme.test',
            Destination: { ToAddresses: to },
            Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
          }),
        )
        .then(
          () => 'sent',
          (e: Error & { $metadata?: { httpStatusCode?: number } }) =>
            `${e.$metadata?.httpStatusCode} ${e.name}: ${e.message}`,
        );
    // A message to three overdraws the second's two tokens: the next waits until it is repaid.
    const started = Date.now();
    expect(await send(['a@acme.test', 'b@acme.test', 'c@acme.test'])).toBe('sent');
    expect(await send(['a@acme.test'])).toBe('429 TooManyRequestsException: Maximum sending rate exceeded.');
    await waitFor(
      () => send(['a@acme.test']),
      (answer) => answer === 'sent',
      5_000,
    );
    // Two recipients' worth of debt at 2 a second: about a second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('refuses past the 24-hour quota (LimitExceededException), when paused (SendingPausedException), and reports both in GetAccount', async () => {
    const { client, standIn: twin } = await ses({ max24HourSend: 2 });
    const send = () =>
      client
        .send(
          new SendEmailCommand({
            FromEmailAddress: 'hello@acme.test',
            Destination: { ToAddresses: ['a@acme.test'] },
            Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
          }),
        )
        .then(
          () => 'sent',
          (e: Error & { $metadata?: { httpStatusCode?: number } }) =>
            `${e.$metadata?.httpStatusCode} ${e.name}: ${e.message}`,
        );
    expect(await send()).toBe('sent');
    expect(await send()).toBe('sent');
    expect(await send()).toBe('400 LimitExceededException: Daily message quota exceeded.');
    expect(await client.send(new GetAccountCommand({}))).toMatchObject({
      SendQuota: { Max24HourSend: 2, MaxSendRate: 14, SentLast24Hours: 2 },
      SendingEnabled: true,
      ProductionAccessEnabled: true,
      EnforcementStatus: 'HEALTHY',
    });
    twin.account.setSendingPaused(true);
    expect(await send()).toBe(
      "400 SendingPausedException: The account's ability to send email is currently paused.",
    );
    expect((await client.send(new GetAccountCommand({}))).SendingEnabled).toBe(false);
  });

  it('in the sandbox: 1 per second, 200 per 24 hours, and recipients only at verified identities or the simulator', async () => {
    const { client } = await ses({ sandbox: true });
    expect((await client.send(new GetAccountCommand({}))).SendQuota).toEqual({
      Max24HourSend: 200,
      MaxSendRate: 1,
      SentLast24Hours: 0,
    });
    const send = (to: string) =>
      client
        .send(
          new SendEmailCommand({
            FromEmailAddress: 'hello@acme.test',
            Destination: { ToAddresses: [to] },
            Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
          }),
        )
        .then(
          () => 'sent',
          (e: Error) => `${e.name}: ${e.message}`,
        );
    expect(await send('someone@example.com')).toBe(
      'MessageRejected: Email address is not verified. The following identities failed the check in region US-EAST-1: someone@example.com',
    );
    expect(await send('success@simulator.amazonses.com')).toBe('sent');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await send('anyone@acme.test')).toBe('sent');
  });

  it("refuses an SES call the calling function's role does not grant, with 403 AccessDeniedException", async () => {
    await ses({});
    const stop = identifyCallers();
    const saved = { ...process.env };
    try {
      Object.assign(process.env, {
        AWS_ENDPOINT_URL_SESV2: standIn?.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      });
      const asFunction = newSesClient();
      const read = (name: string) =>
        runAs(name, () => asFunction.send(new GetAccountCommand({}))).then(
          (a) => `MaxSendRate ${a.SendQuota?.MaxSendRate}`,
          (e: Error & { $metadata?: { httpStatusCode?: number } }) =>
            `${e.$metadata?.httpStatusCode} ${e.name}`,
        );
      expect(await read('process-send-queue')).toBe('MaxSendRate 14');
      expect(await read('send-email')).toBe('403 AccessDeniedException');
    } finally {
      stop();
      process.env = saved;
    }
  });
});

describe('the send consumer at SES’s limits', () => {
  it('a throttle is not a failure nor an attempt: the email goes back as a new message carrying its attempts, released and queued', async () => {
    const { mailer } = await ses({ maxSendRate: 1 });
    // Unpaced, a batch of four at 1 per second: SES takes the first, throttles the rest.
    const batch = await Promise.all([queuedEmail(), queuedEmail(), queuedEmail(), queuedEmail()]);
    const result = await consumer(mailer)(
      sqsEvent(batch.map((e, i) => ({ body: e.body, messageId: `m${i}`, receiveCount: i === 3 ? 4 : 1 }))),
    );
    // Every message is done with: one sent, three put back as new messages.
    expect(result.batchItemFailures).toEqual([]);
    const states = await Promise.all(batch.map((e) => emails.getState(e.id)));
    expect(states.filter((s) => s?.sent_at)).toHaveLength(1);
    for (const state of states.filter((s) => !s?.sent_at)) {
      expect(state).toMatchObject({ status: 'queued', refused_at: expect.any(Number) });
      expect(state?.send_started_at).toBeUndefined();
    }
    const back = await requeued(3);
    expect(back.map((j) => j?.throttles)).toEqual([1, 1, 1]);
    // The one on its 4th receive carries 3 attempts used; the others none.
    const carried = back.find((j) => j?.id === batch[3]?.id);
    const sentFirst = states.findIndex((s) => s?.sent_at);
    expect(carried?.attempts).toBe(sentFirst === 3 ? undefined : 3);
    expect(counted.filter((c) => c === 'SesThrottled').length).toBeGreaterThanOrEqual(3);
  });

  it('counts the attempts a deferred email carries: its next refusals end it failed on the 5th attempt, not the 5th receive', async () => {
    const { id, body } = await queuedEmail();
    const job = { ...JSON.parse(body), attempts: 3 };
    const refusing = new ScriptedMailer([
      new MailerError('not now', 'refused', 'AccessDeniedException'),
      new MailerError('not now', 'refused', 'AccessDeniedException'),
    ]);
    const handle = consumer(refusing);
    expect(
      (await handle(sqsEvent([{ body: JSON.stringify(job), messageId: 'a' }]))).batchItemFailures,
    ).toEqual([{ itemIdentifier: 'a' }]);
    expect((await emails.getState(id))?.status).toBe('queued');
    await handle(sqsEvent([{ body: JSON.stringify(job), messageId: 'a', receiveCount: 2 }]));
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('gave up after repeated temporary refusals'),
    });
  });

  it('paces a batch at the account’s rate: one booking, each email at its slot, no throttle', async () => {
    const { client, mailer, standIn: twin } = await ses({ maxSendRate: 4 });
    const batch = await Promise.all(Array.from({ length: 8 }, () => queuedEmail()));
    const started = Date.now();
    const result = await consumer(
      mailer,
      client,
    )(sqsEvent(batch.map((e, i) => ({ body: e.body, messageId: `p${i}` }))));
    expect(result.batchItemFailures).toEqual([]);
    for (const e of batch) expect((await emails.getState(e.id))?.sent_at).toBeDefined();
    const times = twin.ledger
      .entries()
      .filter((e) => e.type === 'accepted' && batch.some((b) => b.id === e.emailId))
      .map((e) => Date.parse(e.at))
      .sort((a, b) => a - b);
    expect(times).toHaveLength(8);
    // 8 at 4 per second: spread over about 1.75 s, never two within the same quarter second.
    expect(times.at(-1) as number).toBeGreaterThanOrEqual(started + 1_700);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(200);
  });

  it('while the 24-hour quota is spent: nothing is sent, emails wait queued and come back in minutes; SES taking them again sends them', async () => {
    const { client, mailer, standIn: twin } = await ses({ max24HourSend: 1 });
    const first = await queuedEmail();
    const handle = consumer(mailer, client, { refreshMs: 0 });
    await handle(sqsEvent([{ body: first.body }]));
    expect((await emails.getState(first.id))?.sent_at).toBeDefined();
    const waiting = await queuedEmail();
    const before = twin.ledger.forwardCounts().size;
    expect((await handle(sqsEvent([{ body: waiting.body, messageId: 'q' }]))).batchItemFailures).toEqual([]);
    // GetAccount says the quota is spent: SES was not even called.
    expect(twin.ledger.forwardCounts().size).toBe(before);
    expect(await emails.getState(waiting.id)).toMatchObject({
      status: 'queued',
      refused_at: expect.any(Number),
    });
    expect(counted).toContain('SesSendingBlocked');
    const [back] = await requeued(1);
    expect(back).toMatchObject({ id: waiting.id });
    expect(back?.throttles).toBeUndefined(); // a spent quota is no throttle: no longer backoff
  });

  it('when SES refuses for a spent quota it had not reported yet: deferred, and the instance stops calling SES until it rechecks', async () => {
    const { client, mailer, standIn: twin } = await ses({ max24HourSend: 1 });
    // Limits read once, before the quota was spent (refreshed only every minute).
    const handle = consumer(mailer, client, { refreshMs: 60_000 });
    const a = await queuedEmail();
    const b = await queuedEmail();
    const c = await queuedEmail();
    await handle(sqsEvent([{ body: a.body }]));
    await handle(sqsEvent([{ body: b.body }]));
    expect((await emails.getState(b.id))?.status).toBe('queued');
    const calls = twin.ledger.forwardCounts().size;
    await handle(sqsEvent([{ body: c.body }]));
    expect(twin.ledger.forwardCounts().size).toBe(calls);
    expect(await requeued(2)).toHaveLength(2);
  });

  it('while the account’s rate is unknown (GetAccount failing, never read): the batch waits for it, then goes back on the queue, neither lost nor failed nor an attempt; once SES answers, it is sent', async () => {
    const { mailer } = await ses({});
    // The account's reads on a client of their own, failing as SES does when throttled.
    const reads = new SESv2Client({ region: 'us-east-1', credentials });
    const account = mockClient(reads);
    account
      .on(GetAccountCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' }));
    const handle = consumer(mailer, reads, { timings: { waitMs: 300, pollMs: 100 } });
    const { id, body } = await queuedEmail();
    const result = await handle(sqsEvent([{ body, receiveCount: 5 }]));
    expect(result.batchItemFailures).toEqual([]);
    expect(account.commandCalls(GetAccountCommand).length).toBeGreaterThanOrEqual(1);
    expect(await emails.getState(id)).toMatchObject({ status: 'queued', refused_at: expect.any(Number) });
    expect((await emails.getState(id))?.send_started_at).toBeUndefined();
    const [back] = await requeued(1);
    expect(back).toMatchObject({ id, attempts: 4 });
    account.on(GetAccountCommand).resolves({
      SendQuota: { MaxSendRate: 14, Max24HourSend: 50_000, SentLast24Hours: 0 },
      SendingEnabled: true,
    });
    await handle(sqsEvent([{ body: JSON.stringify(back) }]));
    expect((await emails.getState(id))?.sent_at).toBeDefined();
  });

  it('while sending is paused: emails wait queued; once SES resumes, they go by themselves', async () => {
    const { client, mailer, standIn: twin } = await ses({ sendingPaused: true });
    const paused = await queuedEmail();
    const handle = consumer(mailer, client, { refreshMs: 0 });
    await handle(sqsEvent([{ body: paused.body }]));
    expect((await emails.getState(paused.id))?.status).toBe('queued');
    twin.account.setSendingPaused(false);
    // It comes back, and back again while this instance has not yet read that SES resumed (it
    // reads beside the sending); then it goes.
    for (let round = 0; round < 3 && !(await emails.getState(paused.id))?.sent_at; round++) {
      const [back] = await requeued(1);
      await handle(sqsEvent([{ body: JSON.stringify({ ...back }) }]));
    }
    expect((await emails.getState(paused.id))?.sent_at).toBeDefined();
  });

  it('claims nothing with too little of the invocation left: the email is deferred, not cut by the timeout', async () => {
    const { mailer } = await ses({});
    const { id, body } = await queuedEmail();
    const handler = makeConsumer({
      emails,
      mailer,
      clock: systemClock,
      maxReceiveCount: 5,
      queue: new SqsEmailQueue(sqs, sendQueue.url),
      deferTimings: quick,
      budget: { sendMs: 12_000, fetchMs: 20_000, marginMs: 3_000 },
    });
    const result = await handler(sqsEvent([{ body }]), { getRemainingTimeInMillis: () => 14_000 });
    expect(result.batchItemFailures).toEqual([]);
    expect((await emails.getState(id))?.send_started_at).toBeUndefined();
    expect((await requeued(1))[0]).toMatchObject({ id });
    // With the time it needs, it goes.
    const enough = await handler(sqsEvent([{ body }]), { getRemainingTimeInMillis: () => 16_000 });
    expect(enough.batchItemFailures).toEqual([]);
    expect((await emails.getState(id))?.sent_at).toBeDefined();
  });

  describe('booking at a low rate (a fake clock: the sandbox’s 1 per second)', () => {
    /**
     * A consumer at 1 per second on a clock that stands still: it records when each email would
     * wake for its slot instead of waiting (and then sends it).
     */
    function atOnePerSecond(now: number, options: { wakesLateBy?: number; rate?: number } = {}) {
      const mailer = new ScriptedMailer();
      const wakes: number[] = [];
      const handler = makeConsumer({
        emails,
        mailer,
        clock: { now: () => new Date(now) },
        sleep: async (ms) => {
          // To the microsecond the schedule books in (the clock's ms since 1970 carry about 0.2 µs).
          wakes.push(Math.round(ms * 1000) / 1000);
          // A timer that wakes late (a busy event loop, say) moves the clock past the slot.
          if (options.wakesLateBy) now += ms + options.wakesLateBy;
        },
        maxReceiveCount: 5,
        queue: new SqsEmailQueue(sqs, sendQueue.url),
        deferTimings: quick,
        budget: { sendMs: 12_000, fetchMs: 20_000, marginMs: 3_000 },
        pace: {
          pacer: new DynamoSendPacer(table.db, table.tableName),
          limits: new SendingLimits(
            {
              read: async () => ({
                maxSendRate: options.rate ?? 1,
                max24HourSend: 200,
                sentLast24Hours: 0,
                sendingEnabled: true,
              }),
            },
            { refreshMs: 60_000, blockedRecheckMs: 60_000 },
          ),
        },
      });
      const invoke = (bodies: string[], leftMs: number) =>
        handler(sqsEvent(bodies.map((body, i) => ({ body, messageId: `l${i}` }))), {
          getRemainingTimeInMillis: () => leftMs,
        });
      return { invoke, wakes, sent: mailer.sent };
    }

    it('books the emails of a batch that fit in the invocation’s time, a slot apart, and puts the rest back for when the schedule has room', async () => {
      const consumer = atOnePerSecond(4_000_000_000_000);
      const batch = await Promise.all(Array.from({ length: 10 }, () => queuedEmail()));
      // 20 s left, 15 s of it for SES and the writes: the last may start 5 s from now.
      const result = await consumer.invoke(
        batch.map((e) => e.body),
        20_000,
      );
      expect(result.batchItemFailures).toEqual([]);
      // 1/s booked at 0.95/s: slots 1,052.632 ms apart, from 0 to 4.2 s: five of them (the first at once).
      expect(consumer.wakes.sort((a, b) => a - b)).toEqual([1052.632, 2105.264, 3157.895, 4210.527]);
      expect(consumer.sent.map((j) => j.id).sort()).toEqual(
        batch
          .slice(0, 5)
          .map((e) => e.id)
          .sort(),
      );
      // Back on the queue, held until the schedule has room (seconds away), and recorded on each
      // email so the sweeper leaves them however long the schedule is full.
      expect(await delayedMessages()).toBe(5);
      for (const e of batch.slice(5))
        expect(await emails.getState(e.id)).toMatchObject({ refused_at: expect.any(Number) });
      for (const e of batch.slice(5)) expect((await emails.getState(e.id))?.send_started_at).toBeUndefined();
    });

    it('sends an email to 50 recipients at once: its recipients after the first are booked after it, not waited for', async () => {
      const consumer = atOnePerSecond(5_000_000_000_000);
      const fifty = Array.from({ length: 50 }, (_, i) => `r${i}@simulator.amazonses.com`);
      const big = await queuedEmail(fifty);
      await consumer.invoke([big.body], 40_000);
      expect(consumer.sent.map((j) => j.id)).toEqual([big.id]);
      expect(consumer.wakes).toEqual([]);
      // The next email waits for those 50 recipients' time (about 53 s): more than an invocation
      // can wait, so it goes back on the queue, held until then.
      const next = await queuedEmail();
      await consumer.invoke([next.body], 40_000);
      expect(consumer.sent).toHaveLength(1);
      expect((await emails.getState(next.id))?.send_started_at).toBeUndefined();
      expect(await delayedMessages()).toBe(1);
    });

    it('books an email whose file must be fetched only where the fetch fits too, else puts it back without booking', async () => {
      const consumer = atOnePerSecond(6_000_000_000_000);
      // Ten recipients booked first: the schedule is about 10.5 s ahead.
      await consumer.invoke(
        [(await queuedEmail(Array.from({ length: 10 }, (_, i) => `p${i}@acme.test`))).body],
        40_000,
      );
      const id = newEmailId();
      const content = emailContent({
        from: 'Acme <hello@acme.test>',
        attachments: [
          {
            id: 'att_1',
            filename: 'report.pdf',
            content_type: 'application/pdf',
            content_disposition: 'attachment',
            content_id: null,
            size: null,
            path: 'https://files.example.com/report.pdf',
          },
        ],
      });
      await emails.create({ id, created_at: new Date().toISOString(), content });
      // 40 s left: a fetch (20 s), SES (12 s) and the writes (6 s) leave 1.5 s to wait: not 10 s.
      const result = await consumer.invoke([JSON.stringify({ id, content })], 40_000);
      expect(result.batchItemFailures).toEqual([]);
      expect(consumer.sent).toHaveLength(1);
      expect(await delayedMessages()).toBe(1);
      expect((await emails.getState(id))?.send_started_at).toBeUndefined();
      // Nothing booked for it: an email without a file waits exactly as long as before.
      const next = await queuedEmail();
      await consumer.invoke([next.body], 40_000);
      expect(consumer.wakes.at(-1)).toBe(10_526.316);
    });
    it('at 1 a second, an email more than a second late for its slot takes a new one; at 14 a second it goes', async () => {
      const strict = atOnePerSecond(7_000_000_000_000, { wakesLateBy: 1_500 });
      const pair = await Promise.all([queuedEmail(), queuedEmail()]);
      await strict.invoke(
        pair.map((e) => e.body),
        40_000,
      );
      // The first goes at once; the second woke 1.5 s after its slot: back for a new one.
      expect(strict.sent).toHaveLength(1);
      expect(await delayedMessages()).toBe(1);
      await sqs.send(new PurgeQueueCommand({ QueueUrl: sendQueue.url }));
      const loose = atOnePerSecond(8_000_000_000_000, { wakesLateBy: 1_500, rate: 14 });
      const more = await Promise.all(Array.from({ length: 3 }, () => queuedEmail()));
      await loose.invoke(
        more.map((e) => e.body),
        40_000,
      );
      expect(loose.sent).toHaveLength(3);
    });
  });

  it('a schedule that cannot be written puts the batch back, claiming nothing and counting no attempt', async () => {
    const { id, body } = await queuedEmail();
    const handler = makeConsumer({
      emails,
      mailer: new ScriptedMailer(),
      clock: systemClock,
      maxReceiveCount: 5,
      queue: new SqsEmailQueue(sqs, sendQueue.url),
      deferTimings: quick,
      pace: {
        pacer: { reserve: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) },
        limits: new SendingLimits(
          {
            read: async () => ({
              maxSendRate: 14,
              max24HourSend: 200,
              sentLast24Hours: 0,
              sendingEnabled: true,
            }),
          },
          { refreshMs: 60_000, blockedRecheckMs: 60_000 },
        ),
      },
    });
    const result = await handler(sqsEvent([{ body, receiveCount: 5 }]));
    expect(result.batchItemFailures).toEqual([]);
    expect((await emails.getState(id))?.send_started_at).toBeUndefined();
    // Carried over: the four receives before this one; this one was no attempt.
    expect((await requeued(1))[0]).toMatchObject({ id, attempts: 4 });
  });

  it('a put-back the queue refuses keeps its own message (retried later) and nothing else of the batch', async () => {
    const { mailer } = await ses({ maxSendRate: 1 });
    const a = await queuedEmail();
    const b = await queuedEmail();
    const refusing = new SqsEmailQueue(sqs, `${sendQueue.url}-does-not-exist`);
    const handler = makeConsumer({
      emails,
      mailer,
      clock: systemClock,
      maxReceiveCount: 5,
      queue: refusing,
      deferTimings: quick,
    });
    // At 1 per second unpaced, one is taken and one throttled: its put-back fails, so it is kept.
    const result = await handler(
      sqsEvent([
        { body: a.body, messageId: 'a' },
        { body: b.body, messageId: 'b' },
      ]),
    );
    const sent = (await Promise.all([a, b].map((e) => emails.getState(e.id)))).map((st) =>
      Boolean(st?.sent_at),
    );
    expect(sent.filter(Boolean)).toHaveLength(1);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: sent[0] ? 'b' : 'a' }]);
  });
});
