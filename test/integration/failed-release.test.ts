import { SESv2Client } from '@aws-sdk/client-sesv2';
import {
  DeleteMessageCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSweepStore } from '../../functions/adapters/dynamodb/sweep-store.js';
import { SesIdentities } from '../../functions/adapters/ses/identities.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import { SqsEmailQueue } from '../../functions/adapters/sqs/email-queue.js';
import { type EmailRepository, type Mailer, MailerError } from '../../functions/emails/ports.js';
import { parseSendJob } from '../../functions/emails/send-job.js';
import { sweep } from '../../functions/emails/sweep.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';
import { sqsEvent } from '../support/events.js';
import { failingWrites, isRelease } from '../support/failing-writes.js';
import { awsSweepSettings, emailContent, RecordingQueue, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * A claim SES answered without taking the email (a throttle, a refusal) whose release fails: the
 * email must not be left to the sweeper's "outcome unknown", and no claim whose SES call may have
 * gone out may ever be undone. The real consumer, the table (dynalite), the send queue (fauxqs) and
 * the local SES, whose rate limit throttles.
 */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let table: TestTable;
let emulators: Emulators;
let sqs: SQSClient;
let sendQueue: { url: string };
let emails: DynamoEmailRepository;
let standIn: SesStandIn | undefined;

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  emulators = await startEmulators({ sesPort: 0 });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  sendQueue = (await ensureQueueWithDlq(sqs, 'send', { maxReceiveCount: 5, visibilityTimeoutSeconds: 1 }))
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

/** The local SES at `maxSendRate` a second, and a verified acme.test to send from. */
async function ses(maxSendRate: number) {
  const eventsQueue = (
    await ensureQueueWithDlq(sqs, 'events', { maxReceiveCount: 5, visibilityTimeoutSeconds: 1 })
  ).queue;
  standIn = await startSesStandIn({
    emulatorEndpoint: emulators.sesEndpoint,
    sqs,
    eventsQueueUrl: eventsQueue.url,
    eventDelayMs: 10,
    identities: { verifyAfterMs: 0 },
    configurationSets: { stack: ['set'] },
    account: { maxSendRate },
  });
  // One attempt per call, as the consumer's SES client makes.
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
  return { mailer: new SesMailer(client, 'set'), twin: standIn };
}

async function queuedEmail() {
  const id = newEmailId();
  const content = emailContent({ from: 'Acme <hello@acme.test>', to: ['success@simulator.amazonses.com'] });
  await emails.create({ id, created_at: new Date().toISOString(), content });
  return { id, body: JSON.stringify({ id, content }) };
}

const consumer = (repository: EmailRepository, mailer: Mailer) =>
  makeConsumer({
    emails: repository,
    mailer,
    clock: systemClock,
    maxReceiveCount: 5,
    queue: new SqsEmailQueue(sqs, sendQueue.url),
    deferTimings: {
      throttleBackoffMs: 100,
      throttleBackoffMaxMs: 500,
      blockedRetryMinMs: 500,
      blockedRetryMaxMs: 1_000,
    },
  });

/** Message bodies on the send queue (delayed ones once due), until none comes for `quietMs`. */
async function receiveAll(quietMs = 1_500): Promise<string[]> {
  const bodies: string[] = [];
  let quietSince = Date.now();
  while (Date.now() - quietSince < quietMs) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: sendQueue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    if (Messages.length) quietSince = Date.now();
    bodies.push(...Messages.map((m) => m.Body ?? ''));
    // Taken: the consumer it is handed to answers for it now.
    for (const m of Messages)
      await sqs.send(new DeleteMessageCommand({ QueueUrl: sendQueue.url, ReceiptHandle: m.ReceiptHandle }));
  }
  return bodies;
}

/**
 * Delivers what SQS would deliver next, as often as it comes, to `handle`, until the queue is quiet:
 * the messages kept (reported failed: redelivered) and those put back on the queue.
 */
async function drain(handle: ReturnType<typeof consumer>, kept: { body: string; receives: number }[]) {
  let next = kept;
  for (let round = 0; round < 20 && next.length; round++) {
    const result = await handle(
      sqsEvent(next.map((m, i) => ({ body: m.body, messageId: `r${round}-${i}`, receiveCount: m.receives }))),
    );
    const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
    next = [
      ...next.filter((_, i) => failed.has(`r${round}-${i}`)).map((m) => ({ ...m, receives: m.receives + 1 })),
      ...(await receiveAll()).map((body) => ({ body, receives: 1 })),
    ];
  }
}

describe('a failed release never becomes a failure the email did not have', () => {
  it('throttled by SES, its claim not released: the message put back carries the claim, whose next receive releases it and sends the email, once', async () => {
    const { mailer, twin } = await ses(1);
    const failing = failingWrites(table, isRelease);
    const batch = [await queuedEmail(), await queuedEmail()];
    // Unpaced, two at once at 1 a second: SES takes one and throttles the other, whose release fails.
    const first = await consumer(
      failing.repo,
      mailer,
    )(sqsEvent(batch.map((e, i) => ({ body: e.body, messageId: `m${i}` }))));
    expect(failing.failing.refused).toBeGreaterThan(0);
    const states = await Promise.all(batch.map((e) => emails.getState(e.id)));
    const throttled = batch[states.findIndex((s) => !s?.sent_at)] as { id: string; body: string };
    expect((await emails.getState(throttled.id))?.send_started_at).toEqual(expect.any(Number));
    failing.failing.on = false;
    // What SQS delivers next: the message kept (reported failed), or the one put back.
    const kept = first.batchItemFailures.length ? [{ body: throttled.body, receives: 2 }] : [];
    await drain(consumer(emails, mailer), [
      ...kept,
      ...(await receiveAll()).map((body) => ({ body, receives: 1 })),
    ]);
    const state = await emails.getState(throttled.id);
    expect(state?.sent_at).toEqual(expect.any(String));
    const accepted = twin.ledger.entries().filter((e) => e.type === 'accepted' && e.emailId === throttled.id);
    expect(accepted).toHaveLength(1);
    // Half an hour later the sweeper finds nothing to end.
    const report = await sweep(
      {
        emails,
        store: new DynamoSweepStore(table.db, table.tableName),
        queue: new RecordingQueue(),
        deadLetters: { receive: async () => [] },
        clock: { now: () => new Date(Date.now() + 31 * 60_000) },
        settings: awsSweepSettings,
      },
      { fromStart: true },
    );
    expect(report.failedUnknownOutcome).toBe(0);
    failing.stop();
  });

  it('refused for now, its claim not released: the retry is a new message carrying the claim, and the email is sent on it', async () => {
    const failing = failingWrites(table, isRelease);
    const { id, body } = await queuedEmail();
    const mailer = new ScriptedMailer([new MailerError('not now', 'refused', 'AccessDeniedException')]);
    const first = await consumer(failing.repo, mailer)(sqsEvent([{ body, messageId: 'a' }]));
    expect(failing.failing.refused).toBeGreaterThan(0);
    failing.failing.on = false;
    // Put back 5 s later, as an email SES never got the request for.
    const back = await receiveAll(6_500);
    if (!first.batchItemFailures.length) {
      // Counted as the attempt it was, the claim it leaves standing named.
      expect(back.map(parseSendJob)).toEqual([
        expect.objectContaining({
          id,
          attempts: 1,
          unreleased: { started_at: expect.any(Number), mark: expect.any(String) },
        }),
      ]);
    }
    const kept = first.batchItemFailures.length ? [{ body, receives: 2 }] : [];
    await drain(consumer(emails, mailer), [...kept, ...back.map((b) => ({ body: b, receives: 1 }))]);
    expect((await emails.getState(id))?.sent_at).toEqual(expect.any(String));
    expect(mailer.sent.map((job) => job.id)).toEqual([id]);
    failing.stop();
  });

  it('releases only the very claim its message names: never another claim standing (its SES call may have gone out), nor a sent email', async () => {
    const mailer = new ScriptedMailer();
    const handle = consumer(emails, mailer);
    const startedAt = Date.now() - 1_000;
    // Another worker's claim, its SES call under way: a message naming its time but another mark,
    // or its mark but another time, leaves it standing and sends nothing.
    const { id, body } = await queuedEmail();
    expect(await emails.claim(id, startedAt, undefined, { mark: 'theirs' })).toBe('claimed');
    const carrying = (unreleased: { started_at: number; mark: string }) =>
      JSON.stringify({ ...JSON.parse(body), unreleased });
    const result = await handle(
      sqsEvent([
        { body: carrying({ started_at: startedAt, mark: 'mine' }), messageId: 'a' },
        { body: carrying({ started_at: startedAt + 1, mark: 'theirs' }), messageId: 'b' },
      ]),
    );
    expect(result.batchItemFailures).toEqual([]);
    expect(mailer.sent).toEqual([]);
    expect(await emails.getState(id)).toMatchObject({ send_started_at: startedAt, claim_mark: 'theirs' });
    // Its own claim, once sent (a duplicate of the message comes late): nothing more.
    const sent = await queuedEmail();
    expect(await emails.claim(sent.id, startedAt, undefined, { mark: 'mine' })).toBe('claimed');
    await emails.markSent(sent.id, 'ses-1', new Date().toISOString());
    await handle(
      sqsEvent([
        {
          body: JSON.stringify({
            ...JSON.parse(sent.body),
            unreleased: { started_at: startedAt, mark: 'mine' },
          }),
        },
      ]),
    );
    expect(mailer.sent).toEqual([]);
    // Two copies of the message that names a standing claim: the email is sent once.
    const twice = await queuedEmail();
    expect(await emails.claim(twice.id, startedAt, undefined, { mark: 'mine' })).toBe('claimed');
    const copy = JSON.stringify({
      ...JSON.parse(twice.body),
      unreleased: { started_at: startedAt, mark: 'mine' },
    });
    await handle(
      sqsEvent([
        { body: copy, messageId: 'c1' },
        { body: copy, messageId: 'c2' },
      ]),
    );
    expect(mailer.sent.map((job) => job.id)).toEqual([twice.id]);
  });
});
