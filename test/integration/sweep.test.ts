import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSendPacer } from '../../functions/adapters/dynamodb/send-pacer.js';
import { DynamoSweepStore } from '../../functions/adapters/dynamodb/sweep-store.js';
import type { DeadLetters, QueuedJob, SendJob, SweepProgress } from '../../functions/emails/ports.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { SWEEP_MARGIN_MS, type SweepDeps, sweep } from '../../functions/emails/sweep.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeSweepHandler } from '../../functions/handlers/sweep-emails.js';
import { emailIdAt, FIRST_EMAIL_ID } from '../../functions/shared/ids.js';
import { SendingLimits } from '../../functions/shared/pacing.js';
import type { WebhookEvent } from '../../functions/webhooks/model.js';
import type { EventPublisher } from '../../functions/webhooks/ports.js';
import { sqsEvent } from '../support/events.js';
import { awsSweepSettings, emailContent, RecordingQueue, ScriptedMailer } from '../support/fakes.js';
import { emailIdCreatedAt } from '../support/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let emails: DynamoEmailRepository;
let store: DynamoSweepStore;
let queue: RecordingQueue;
let deadLetters: { messages: { job?: QueuedJob; messageId: string }[] } & DeadLetters;
let now: number;

const settings = awsSweepSettings;

const content = emailContent({ to: ['a@example.com'], subject: 'Stranded?' });

async function accepted(agoMs: number) {
  const id = emailIdCreatedAt(now - agoMs);
  await emails.create({ id, created_at: new Date(now - agoMs).toISOString(), content });
  return id;
}

/** Sets the sweeper's progress, as if an earlier run had left it there. */
const setProgress = async (progress: SweepProgress) => {
  expect(await store.saveProgress(progress, await store.progress())).toBe(true);
};

const deps = (over: Partial<SweepDeps> = {}): SweepDeps => ({
  emails,
  store,
  queue,
  deadLetters,
  clock: { now: () => new Date(now) },
  settings,
  ...over,
});

beforeEach(async () => {
  // Each test with a table of its own, and the sweeper's progress caught up to a day ago.
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  store = new DynamoSweepStore(table.db, table.tableName);
  now = Date.now();
  await setProgress({ fromId: emailIdAt(now - 86_400_000), oldCheckedAtMs: now, oldFromId: FIRST_EMAIL_ID });
  queue = new RecordingQueue();
  deadLetters = {
    messages: [],
    async receive(max) {
      return this.messages.splice(0, max);
    },
  };
});
afterEach(() => table.stop());

describe('sweeper (dynalite)', () => {
  it('re-queues a stranded email once, with its content; leaves fresh, sent, sending and final ones alone', async () => {
    const stranded = await accepted(20 * 60_000);
    const fresh = await accepted(60_000);
    const sent = await accepted(20 * 60_000);
    await emails.claim(sent, now - 19 * 60_000);
    await emails.markSent(sent, 'ses-1', new Date(now - 19 * 60_000).toISOString());
    const sending = await accepted(20 * 60_000);
    await emails.claim(sending, now - 60_000);
    const final = await accepted(20 * 60_000);
    await emails.finish(final, 'delivered', new Date(now).toISOString());

    const report = await sweep(deps());
    expect(report).toMatchObject({ requeued: 1, deferred: 0, failedUnknownOutcome: 0 });
    // Marked as the sweeper's: it may duplicate a message still queued.
    expect(queue.jobs).toEqual([{ id: stranded, content, requeued: true }]);
    expect(queue.jobs.map((j) => j.id)).not.toContain(fresh);
    // A minute later: not again (its new message may still be in the queue).
    now += 60_000;
    expect((await sweep(deps())).requeued).toBe(0);
    // Once the grace period has passed again with it still unsent: once more.
    now += settings.requeueAfterMs;
    const later = await sweep(deps());
    expect(later.requeued).toBe(2); // and now `fresh` is old enough too
    expect(queue.jobs.map((j) => j.id).sort()).toEqual([stranded, stranded, fresh].sort());
  });

  it('defers re-queueing while the queue has a backlog its message may be waiting in', async () => {
    const stranded = await accepted(20 * 60_000);
    queue.waiting = 1200;
    expect(await sweep(deps())).toMatchObject({ requeued: 0, deferred: 1 });
    queue.waiting = 0;
    now += 60_000;
    expect((await sweep(deps())).requeued).toBe(1);
    expect(queue.jobs.map((j) => j.id)).toEqual([stranded]);
    // A backlog that never clears: once it has waited the grace period beyond, it is re-queued anyway.
    const behindBacklog = await accepted(20 * 60_000);
    queue.waiting = 50_000;
    expect((await sweep(deps())).deferred).toBe(1);
    now += settings.backlogGraceMs;
    await sweep(deps());
    expect(queue.jobs.map((j) => j.id)).toContain(behindBacklog);
  });

  it('waits from the last refusal: a message SES keeps refusing is being retried, not lost', async () => {
    const id = await accepted(20 * 60_000);
    await emails.claim(id, now - 3 * 60_000);
    await emails.release(id, now - 3 * 60_000, now - 3 * 60_000);
    expect((await sweep(deps())).requeued).toBe(0);
    now += settings.requeueAfterMs;
    expect((await sweep(deps())).requeued).toBe(1);
  });

  it('leaves an email scheduled for later alone', async () => {
    const id = await accepted(20 * 60_000);
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: `EMAIL#${id}`, sk: 'STATUS' },
        UpdateExpression: 'SET scheduled_at = :at',
        ExpressionAttributeValues: { ':at': new Date(now + 3_600_000).toISOString() },
      }),
    );
    expect((await sweep(deps())).requeued).toBe(0);
    expect(queue.jobs).toEqual([]);
  });

  it('ends an attempt whose outcome stayed unknown `failed`, saying so; never sends it again', async () => {
    const id = await accepted(60 * 60_000);
    await emails.claim(id, now - 31 * 60_000);
    await emails.markUnknown(id, 'TimeoutError: no answer within 10000 ms');
    expect(await sweep(deps())).toMatchObject({ failedUnknownOutcome: 1, requeued: 0 });
    const email = await emails.get(id);
    expect(email?.status).toBe('failed');
    expect(email?.failure_reason).toMatch(
      /^outcome unknown: .*TimeoutError: no answer within 10000 ms.*not sent again/,
    );
    expect(queue.jobs).toEqual([]);
  });

  it('does not end a standing claim as unknown while the queue has a backlog the message carrying its release may wait in; ends it once the grace has passed', async () => {
    // SES throttled the attempt and its release failed: the message that releases the claim is
    // at the back of a queue two hours long.
    const refused = await accepted(60 * 60_000);
    const startedAt = now - 31 * 60_000;
    expect(await emails.claim(refused, startedAt, undefined, { mark: 'throttled' })).toBe('claimed');
    queue.waiting = 100_000;
    expect(await sweep(deps())).toMatchObject({ failedUnknownOutcome: 0, deferred: 1 });
    // Its message comes: the claim is released exactly, and the email is sent later as usual.
    expect(await emails.releaseStanding(refused, { started_at: startedAt, mark: 'throttled' }, now)).toBe(
      true,
    );
    now += 60_000;
    expect((await sweep(deps())).failedUnknownOutcome).toBe(0);
    expect((await emails.getState(refused))?.status).toBe('queued');
    // A claim no message comes for, behind a backlog that never clears: ended once it has waited
    // the backlog's grace beyond the usual time.
    const unknown = await accepted(60 * 60_000);
    await emails.claim(unknown, now - 31 * 60_000);
    expect((await sweep(deps())).failedUnknownOutcome).toBe(0);
    now += settings.backlogGraceMs;
    expect((await sweep(deps())).failedUnknownOutcome).toBe(1);
    expect((await emails.getState(unknown))?.status).toBe('failed');
  });

  it('an unknown attempt confirmed by its Send event meanwhile is left as sent', async () => {
    const id = await accepted(60 * 60_000);
    await emails.claim(id, now - 31 * 60_000);
    await emails.markSent(id, 'ses-late', new Date(now - 30 * 60_000).toISOString());
    expect((await sweep(deps())).failedUnknownOutcome).toBe(0);
    expect((await emails.getState(id))?.status).toBe('queued');
  });

  it('ends failed what the dead-letter queue got without any attempt having begun', async () => {
    const unsent = await accepted(60_000);
    const sending = await accepted(60_000);
    await emails.claim(sending, now - 1000);
    deadLetters.messages.push(
      { messageId: 'm1', job: { id: unsent, content } },
      { messageId: 'm2', job: { id: sending, content } },
      { messageId: 'm3' },
    );
    expect((await sweep(deps())).failedFromDeadLetters).toBe(1);
    expect(await emails.get(unsent)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('dead-letter queue'),
    });
    expect((await emails.getState(sending))?.status).toBe('queued'); // its attempt decides
  });

  it('raises email.failed for each email it fails (to endpoints subscribed), from the stored content', async () => {
    const unknown = await accepted(60 * 60_000);
    await emails.claim(unknown, now - 31 * 60_000);
    const dead = await accepted(60_000);
    deadLetters.messages.push({ messageId: 'm1', job: { id: dead, content } });
    const published: WebhookEvent[] = [];
    const events: EventPublisher = {
      subscriptions: async () => ({
        wants: (type) => type === 'email.failed',
        publish: async (list) => void published.push(...list),
      }),
    };
    await sweep(deps({ events }));
    expect(published.map((e) => [e.type, e.data.email_id]).sort()).toEqual(
      [
        ['email.failed', dead],
        ['email.failed', unknown],
      ].sort(),
    );
    for (const event of published)
      expect(event.data).toMatchObject({
        to: ['a@example.com'],
        subject: 'Stranded?',
        failed: { reason: expect.stringMatching(/dead-letter queue|outcome unknown/) },
      });
    // Nobody subscribed: nothing is built or read.
    const quiet: EventPublisher = {
      subscriptions: async () => ({ wants: () => false, publish: async () => expect.unreachable() }),
    };
    const again = await accepted(60_000);
    deadLetters.messages.push({ messageId: 'm2', job: { id: again, content } });
    await sweep(deps({ events: quiet }));
    expect((await emails.getState(again))?.status).toBe('failed');
  });

  it('settles a sent email SES never reported a final event for, once SES stopped trying', async () => {
    const id = await accepted(16 * 3_600_000);
    await emails.claim(id, now - 16 * 3_600_000);
    await emails.markSent(id, 'ses-1', new Date(now - 16 * 3_600_000).toISOString());
    const recent = await accepted(16 * 3_600_000);
    await emails.claim(recent, now - 60_000); // sent late (after retries): not overdue yet
    await emails.markSent(recent, 'ses-2', new Date(now - 60_000).toISOString());
    await setProgress({ ...(await store.progress()), oldCheckedAtMs: 0 });
    expect((await sweep(deps())).failedNoFinalEvent).toBe(1);
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('no delivery or bounce within 15 hours'),
    });
    expect((await emails.getState(recent))?.status).toBe('queued');
    // Looked at once an hour, not every run.
    expect((await store.progress()).oldCheckedAtMs).toBe(now);
  });

  it('the old-email check pages past unsent emails: they cannot keep it from sent ones', async () => {
    for (let i = 0; i < 7; i++) await accepted(17 * 3_600_000); // stranded unsent: the main scan's
    const id = await accepted(16 * 3_600_000);
    await emails.claim(id, now - 16 * 3_600_000);
    await emails.markSent(id, 'ses-1', new Date(now - 16 * 3_600_000).toISOString());
    await setProgress({ ...(await store.progress()), fromId: emailIdAt(now), oldCheckedAtMs: 0 });
    const report = await sweep(deps({ settings: { ...settings, maxPerRun: 3 } }));
    expect(report.failedNoFinalEvent).toBe(1);
    expect((await emails.getState(id))?.status).toBe('failed');
  });

  it('scheduled emails waiting for their time cannot keep the old-email check from a sent one: the pass goes on at the next runs', async () => {
    // Accepted more than 15 h ago and due in 10 days: queued, unsent, and the check's to pass over.
    const later = new Date(now + 10 * 86_400_000).toISOString();
    for (let i = 0; i < 5; i++) {
      const id = emailIdCreatedAt(now - 20 * 3_600_000 + i);
      await emails.create({
        id,
        created_at: new Date(now - 20 * 3_600_000).toISOString(),
        content,
        schedule: { at: later, key_id: 'key_1', dispatched: false },
      });
    }
    const sent = await accepted(16 * 3_600_000);
    await emails.claim(sent, now - 16 * 3_600_000);
    await emails.markSent(sent, 'ses-1', new Date(now - 16 * 3_600_000).toISOString());
    await setProgress({ ...(await store.progress()), fromId: emailIdAt(now), oldCheckedAtMs: 0 });
    const small = { ...settings, maxPerRun: 2, maxOldPerCheck: 2 };
    // Two a run: the first two runs read only scheduled ones, and the pass is left under way.
    expect((await sweep(deps({ settings: small }))).failedNoFinalEvent).toBe(0);
    expect((await store.progress()).oldFromId).not.toBe(FIRST_EMAIL_ID);
    now += 60_000;
    expect((await sweep(deps({ settings: small }))).failedNoFinalEvent).toBe(0);
    now += 60_000;
    expect((await sweep(deps({ settings: small }))).failedNoFinalEvent).toBe(1);
    expect((await emails.getState(sent))?.status).toBe('failed');
    // The pass read everything: it ends, and the next waits an hour.
    now += 60_000;
    await sweep(deps({ settings: small }));
    const done = await store.progress();
    expect(done.oldFromId).toBe(FIRST_EMAIL_ID);
    expect(done.oldCheckedAtMs).toBe(now);
    now += 60_000;
    expect((await sweep(deps({ settings: small }))).examined).toBe(0);
  });

  it('moves past open emails (a crowd SES is throttling) to the stranded ones after them, then looks at the open ones again', async () => {
    // Eight emails whose attempts are under way (young: still open), then a stranded one; a run reads three.
    const open: string[] = [];
    for (let i = 0; i < 8; i++) {
      const id = await accepted(30 * 60_000 - i * 1000);
      await emails.claim(id, now - 60_000);
      open.push(id);
    }
    const stranded = await accepted(20 * 60_000);
    const few = { ...settings, maxPerRun: 3 };
    const requeued: string[] = [];
    for (let run = 0; run < 4 && requeued.length === 0; run++) {
      await sweep(deps({ settings: few }));
      requeued.push(...queue.jobs.map((job) => job.id));
      now += 60_000;
    }
    // Reached in the fourth run at the latest (the old scan stopped at the first open one for good).
    expect(requeued).toEqual([stranded]);
    // Meanwhile it remembers the oldest still open; the next run reaches the newest and starts
    // the pass again from it.
    expect((await store.progress()).unresolvedFromId).toBe(open[0]);
    await sweep(deps({ settings: few }));
    const progress = await store.progress();
    expect(progress.fromId).toBe(open[0]);
    expect(progress.unresolvedFromId).toBeUndefined();
    // Their attempts got no answer: the next passes find them again and settle each one.
    now += 60 * 60_000;
    let failed = 0;
    for (let run = 0; run < 6; run++) failed += (await sweep(deps({ settings: few }))).failedUnknownOutcome;
    expect(failed).toBe(8);
  });

  it('grows its pass with the backlog: page after page while the invocation has time, one page when it has not', async () => {
    const stranded: string[] = [];
    for (let i = 0; i < 11; i++) stranded.push(await accepted(30 * 60_000 - i * 1000));
    const few = { ...settings, maxPerRun: 3 };
    // Without the invocation's time: one page a run.
    expect((await sweep(deps({ settings: few }))).requeued).toBe(3);
    // Time left, well above the margin: every page of the backlog in one run.
    const handler = makeSweepHandler(deps({ settings: few }));
    const times: number[] = [];
    const report = await handler(undefined, {
      getRemainingTimeInMillis: () => {
        times.push(SWEEP_MARGIN_MS + 1000);
        return SWEEP_MARGIN_MS + 1000;
      },
    });
    expect(report.requeued).toBe(8);
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect(queue.jobs.map((job) => job.id).sort()).toEqual([...stranded].sort());
    // Under the margin after the first page: the run stops there, and the next goes on from it.
    for (let i = 0; i < 7; i++) await accepted(25 * 60_000 - i * 1000);
    now += settings.requeueAfterMs + 60_000;
    queue.jobs.length = 0;
    const short = await makeSweepHandler(deps({ settings: few }))(undefined, {
      getRemainingTimeInMillis: () => SWEEP_MARGIN_MS - 1,
    });
    expect(short.examined).toBe(3);
  });

  it("saves a long scan's progress before the old emails' pass, so a timeout in that pass loses none of it", async () => {
    for (let i = 0; i < 7; i++) await accepted(30 * 60_000 - i * 1000);
    const few = { ...settings, maxPerRun: 3, oldCheckEveryMs: 0 };
    const before = await store.progress();
    const oldBoundary = emailIdAt(now - few.finalEventsAfterMs);
    // The old emails' pass dies (as when the invocation times out in it).
    const dying = Object.assign(Object.create(store), {
      queuedIds: (from: string, boundary: string, limit: number) => {
        if (boundary === oldBoundary) throw new Error('timed out');
        return store.queuedIds(from, boundary, limit);
      },
    }) as DynamoSweepStore;
    const failed = await sweep(
      deps({ settings: few, store: dying, timeLeftMs: () => SWEEP_MARGIN_MS + 1000 }),
    ).catch((error: Error) => error);
    expect(failed).toBeInstanceOf(Error);
    const after = await store.progress();
    expect(after.fromId).not.toBe(before.fromId);
    // The next run goes on from there: the 7 re-queued are not read again.
    queue.jobs.length = 0;
    expect((await sweep(deps({ settings: few }))).requeued).toBe(0);
  });

  it('starts where it stopped: a run that finds nothing stranded reads nothing it read before', async () => {
    const sent = await accepted(20 * 60_000);
    await emails.claim(sent, now - 19 * 60_000);
    await emails.markSent(sent, 'ses-1', new Date(now).toISOString());
    const waiting = await accepted(16 * 60_000);
    await emails.claim(waiting, now - 60_000); // unknown yet: watched
    const first = await sweep(deps());
    expect(first.examined).toBe(2);
    expect((await store.progress()).fromId).toBe(waiting);
    now += 60_000;
    const second = await sweep(deps());
    expect(second.examined).toBe(1); // only the one still to watch
    await emails.markSent(waiting, 'ses-2', new Date(now).toISOString());
    now += 60_000;
    await sweep(deps());
    now += 60_000;
    expect((await sweep(deps())).examined).toBe(0);
  });

  it('a table error on the final attempt: the message goes to the dead-letter queue, and the sweeper ends the email failed', async () => {
    const id = await accepted(60_000);
    const mailer = new ScriptedMailer();
    const throttled = Object.assign(Object.create(emails), {
      claim: async () =>
        Promise.reject(
          Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' }),
        ),
    });
    const consumer = makeConsumer({
      emails: throttled,
      mailer,
      clock: { now: () => new Date(now) },
      maxReceiveCount: 5,
    });
    const body = JSON.stringify({ id, content });
    const result = await consumer(sqsEvent([{ body, messageId: 'last', receiveCount: 5 }]));
    // Reported as failed on its last receive: SQS moves it to the dead-letter queue.
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'last' }]);
    expect((await emails.getState(id))?.status).toBe('queued');
    deadLetters.messages.push({ messageId: 'last', job: { id, content } });
    expect((await sweep(deps())).failedFromDeadLetters).toBe(1);
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('5 times'),
    });
    expect(mailer.sent).toEqual([]);
  });

  it('a sweep racing the send of the email it re-queues does not send twice', async () => {
    const id = await accepted(20 * 60_000);
    const mailer = new ScriptedMailer();
    const consumer = makeConsumer({
      emails,
      mailer,
      clock: { now: () => new Date(now) },
      maxReceiveCount: 5,
    });
    const original = JSON.stringify({ id, content });
    // The original message arrives late, while the sweeper puts a second one on the queue.
    const [, report] = await Promise.all([
      consumer(sqsEvent([{ body: original, messageId: 'late' }])),
      sweep(deps()),
    ]);
    await consumer(
      sqsEvent(queue.jobs.map((job, i) => ({ body: JSON.stringify(job), messageId: `re-${i}` }))),
    );
    expect(mailer.sent.map((job) => job.id)).toEqual([id]);
    expect(report.requeued).toBeLessThanOrEqual(1);
  });

  it('a copy it re-queued takes no slot of the send schedule once the first message sent its email (the claim is checked before booking)', async () => {
    const id = await accepted(20 * 60_000);
    const original = JSON.stringify({ id, content });
    // The first message waits behind a backlog long enough for the sweeper to put a copy back.
    expect((await sweep(deps())).requeued).toBe(1);
    const copy = toQueueMessage(queue.jobs[0] as SendJob);
    const pacer = new DynamoSendPacer(table.db, table.tableName);
    const booked: number[] = [];
    const mailer = new ScriptedMailer();
    const consumer = makeConsumer({
      emails,
      mailer,
      clock: { now: () => new Date(now) },
      maxReceiveCount: 5,
      pace: {
        pacer: {
          reserve: (ms, at, latest) => {
            booked.push(ms);
            return pacer.reserve(ms, at, latest);
          },
        },
        limits: new SendingLimits(
          {
            read: async () => ({
              maxSendRate: 14,
              max24HourSend: 50_000,
              sentLast24Hours: 0,
              sendingEnabled: true,
            }),
          },
          { refreshMs: 60_000, blockedRecheckMs: 60_000 },
        ),
      },
    });
    await consumer(sqsEvent([{ body: original, messageId: 'first' }]));
    expect(booked).toHaveLength(1);
    expect((await consumer(sqsEvent([{ body: copy, messageId: 'copy' }]))).batchItemFailures).toEqual([]);
    expect(booked).toHaveLength(1);
    // Claimed but not yet answered (an attempt under way): no slot either.
    const sending = await accepted(20 * 60_000);
    await emails.claim(sending, now);
    await consumer(sqsEvent([{ body: toQueueMessage({ id: sending, content, requeued: true }) }]));
    expect(booked).toHaveLength(1);
    expect(mailer.sent.map((job) => job.id)).toEqual([id]);
  });

  it('a dead-lettered message that carries a claim left standing (its release failed, then every receive) ends its email for that, not as an unknown outcome', async () => {
    const id = await accepted(25 * 60_000);
    expect(await emails.claim(id, now - 22 * 60_000, undefined, { mark: 'throttled' })).toBe('claimed');
    deadLetters.messages.push({
      messageId: 'dead',
      job: { id, content, unreleased: { started_at: now - 22 * 60_000, mark: 'throttled' } },
    });
    expect((await sweep(deps())).failedFromDeadLetters).toBe(1);
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('dead-letter queue'),
    });
  });
});
