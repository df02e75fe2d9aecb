import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DEFAULT_LAYOUT } from '../../functions/adapters/dynamodb/email-keys.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSweepStore } from '../../functions/adapters/dynamodb/sweep-store.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { sendEmailSchema } from '../../functions/emails/email.js';
import type { DeadLetters, DueJob } from '../../functions/emails/ports.js';
import { SCHEDULE_AHEAD_MS } from '../../functions/emails/schedule.js';
import {
  cancelEmail,
  dispatchScheduled,
  LOST_DISPATCH_AFTER_MS,
  rescheduleEmail,
  SCHEDULER_TIME_MARGIN_MS,
} from '../../functions/emails/scheduler.js';
import { sendBatch } from '../../functions/emails/send-batch.js';
import { type SendEmailDeps, sendEmail } from '../../functions/emails/send-email.js';
import { type SweepDeps, sweep } from '../../functions/emails/sweep.js';
import { makeHandler as makeSchedulerFunction } from '../../functions/handlers/dispatch-scheduled.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeSweepFunction } from '../../functions/handlers/sweep-emails.js';
import { parseInput } from '../../functions/http/middleware.js';
import type { ApiError } from '../../functions/shared/errors.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { ensureTable } from '../../local/resources.js';
import { sqsEvent } from '../support/events.js';
import { awsSweepSettings, emailContent, RecordingQueue, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let emails: DynamoEmailRepository;
let store: DynamoSweepStore;

/** Ids in every partition of the due index up to `until`, earliest first. */
async function dueIds(until: string): Promise<string[]> {
  const entries = (
    await Promise.all(store.duePartitions().map((p) => store.dueIn(p, '', `${until}~`, 1000)))
  ).flat();
  return entries.sort((a, b) => (a.sk < b.sk ? -1 : 1)).map((entry) => entry.id);
}
let apiKeys: DynamoApiKeyRepository;
let queue: RecordingQueue;
let now: number;
let keyId: string;
const clock = { now: () => new Date(now) };
const noDeadLetters: DeadLetters = { receive: async () => [] };

const sweepDeps = (): SweepDeps => ({
  emails,
  store,
  queue,
  deadLetters: noDeadLetters,
  clock,
  settings: awsSweepSettings,
});

/** Stores a scheduled email due `inMs` from now, as the send path does (not queued by it). */
async function scheduled(inMs: number, over: { key?: string; dispatched?: boolean } = {}) {
  const id = newEmailId();
  await emails.create({
    id,
    created_at: new Date(now).toISOString(),
    content: emailContent({ subject: `due in ${inMs}` }),
    schedule: {
      at: new Date(now + inMs).toISOString(),
      key_id: over.key ?? keyId,
      dispatched: over.dispatched ?? false,
    },
  });
  return id;
}

/** A send request's input, as the handler hands it to the use case. */
const sendInput = () =>
  parseInput(sendEmailSchema, {
    from: 'Acme <hello@acme.test>',
    to: 'a@example.com',
    subject: 'Hi',
    text: 'Hi',
  });

const consumer = (mailer: ScriptedMailer, requeue = new RecordingQueue()) =>
  makeConsumer({ emails, apiKeys, mailer, clock, maxReceiveCount: 5, queue: requeue });
const message = (id: string, key = keyId) => ({ body: JSON.stringify({ id, content: null, key_id: key }) });
const refusal = async (work: Promise<unknown>) => {
  try {
    await work;
  } catch (error) {
    return error as ApiError;
  }
  return undefined;
};

beforeEach(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  store = new DynamoSweepStore(table.db, table.tableName);
  apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  queue = new RecordingQueue();
  now = Date.now();
  const { key } = generateApiKey('scheduler', 'full_access', new Date(now));
  await apiKeys.put(key);
  keyId = key.id;
});
afterEach(() => table.stop());

describe('the scheduler (dynalite)', () => {
  it('queues what falls due within its look-ahead, once, held until its time; later ones wait', async () => {
    const soon = await scheduled(30_000);
    const later = await scheduled(2 * 3_600_000);
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ dispatched: 1 });
    expect(queue.jobs).toEqual([{ id: soon, content: null, key_id: keyId, delaySeconds: 30 }]);
    // The next run finds it queued for that time: not again.
    now += 20_000;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ dispatched: 0 });
    // The sweeper leaves both to the scheduler (the later one is not due; the soon one is watched).
    expect((await sweep(sweepDeps())).requeued).toBe(0);
    // It is sent; two hours on, the later one (a run every minute would find it 90 s ahead).
    now += 10_000;
    await emails.claim(soon, now);
    await emails.markSent(soon, 'ses-1', new Date(now).toISOString());
    now += 2 * 3_600_000 - SCHEDULE_AHEAD_MS - 30_000;
    await dispatchScheduled(sweepDeps());
    expect(queue.jobs.map((job) => job.id)).toEqual([soon, later]);
  });

  it('queues an email falling due on time however many queued ones wait unsent behind it, and watches those a page a run', async () => {
    // One shard, three entries a read: twelve due and queued long ago, SES slow to take them.
    const layout = { ...DEFAULT_LAYOUT, shards: 1 };
    emails = new DynamoEmailRepository(table.db, table.tableName, { layout });
    const oneShard = new DynamoSweepStore(table.db, table.tableName, layout);
    const waiting: string[] = [];
    for (let i = 0; i < 12; i++) waiting.push(await scheduled(1000 + i));
    now += 60_000;
    const deps = { ...sweepDeps(), store: oneShard };
    // Four runs dispatch them (the frontier moves three at a time), then the frontier passes them.
    for (let run = 0; run < 5; run++) {
      await dispatchScheduled(deps, { perPartition: 3 });
      now += 1000;
    }
    expect(new Set(queue.jobs.map((job) => job.id))).toEqual(new Set(waiting));
    const dispatchedBefore = queue.jobs.length;
    // A new one falls due: the next run queues it, though twelve unsent ones are ahead of it in the index.
    const fresh = await scheduled(30_000);
    await dispatchScheduled(deps, { perPartition: 3 });
    expect(queue.jobs.slice(dispatchedBefore).map((job) => job.id)).toEqual([fresh]);
    // Their messages were lost: the watch, a page a run, finds each and queues it again.
    now += LOST_DISPATCH_AFTER_MS + 60_000;
    let requeued = 0;
    for (let run = 0; run < 6; run++)
      requeued += (await dispatchScheduled(deps, { perPartition: 3 })).requeued;
    expect(requeued).toBe(13);
  });

  it('keeps a rescheduled email whole until its new time and its retention after: its content never expires before it', async () => {
    const id = await scheduled(3_600_000);
    const expiryOf = async (sk: string) =>
      (await table.db.send(new GetCommand({ TableName: table.tableName, Key: { pk: keys.email(id), sk } })))
        .Item?.expires_at as number;
    const days = (n: number) => Math.ceil((now + n * 86_400_000) / 1000);
    await rescheduleEmail({ emails, queue, clock }, id, new Date(now + 20 * 86_400_000).toISOString());
    for (const sk of [keys.status, keys.summary, keys.body]) expect(await expiryOf(sk)).toBe(days(50));
    // Back to sooner: the status item follows; its content keeps the later expiry (never earlier).
    await rescheduleEmail({ emails, queue, clock }, id, new Date(now + 3 * 86_400_000).toISOString());
    expect(await expiryOf(keys.status)).toBe(days(33));
    expect(await expiryOf(keys.summary)).toBe(days(50));
    // A refused reschedule (it was canceled) changes no expiry.
    await cancelEmail({ emails, clock }, id);
    await refusal(
      rescheduleEmail({ emails, queue, clock }, id, new Date(now + 25 * 86_400_000).toISOString()),
    );
    expect(await expiryOf(keys.body)).toBe(days(50));
  });

  it('starts no partition once its run is short of time, and the next run starts at another one', async () => {
    const soon = await scheduled(30_000);
    const cut = await dispatchScheduled(sweepDeps(), { timeLeft: () => SCHEDULER_TIME_MARGIN_MS - 1 });
    expect(cut).toMatchObject({ dispatched: 0, deferredPartitions: store.duePartitions().length });
    expect(queue.jobs).toEqual([]);
    // Half the partitions' time: the run goes as far as it can, and a later run reaches the rest.
    let calls = 0;
    const half = () => (calls++ < store.duePartitions().length / 2 ? 60_000 : 0);
    const first = await dispatchScheduled(sweepDeps(), { timeLeft: half });
    expect(first.deferredPartitions).toBeGreaterThan(0);
    for (let run = 0; run < 2 && queue.jobs.length === 0; run++) {
      now += 60_000 * Math.ceil(store.duePartitions().length / 2);
      calls = 0;
      await dispatchScheduled(sweepDeps(), { timeLeft: half });
    }
    expect(queue.jobs.map((job) => job.id)).toEqual([soon]);
  });

  it('queues again an email whose message was lost, by the sweeper’s rule; ends one whose attempt got no answer', async () => {
    const lost = await scheduled(10_000);
    const unanswered = await scheduled(10_000);
    await dispatchScheduled(sweepDeps());
    expect(queue.jobs).toHaveLength(2);
    now += 10_000;
    await emails.claim(unanswered, now);
    now += awsSweepSettings.requeueAfterMs + 1000;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ requeued: 1 });
    expect(queue.jobs.at(-1)).toMatchObject({ id: lost, content: null, key_id: keyId, delaySeconds: 0 });
    now += awsSweepSettings.unknownOutcomeAfterMs;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ failedUnknownOutcome: 1 });
    expect((await emails.getState(unanswered))?.status).toBe('failed');
  });

  it('counts the email it ends for an unknown outcome as failed in the email metrics, and raises email.failed, as the sweeper does', async () => {
    const unanswered = await scheduled(10_000);
    await dispatchScheduled(sweepDeps());
    now += 10_000;
    await emails.claim(unanswered, now);
    now += awsSweepSettings.unknownOutcomeAfterMs + awsSweepSettings.requeueAfterMs;
    const counted: { domain: string; counts: Record<string, number>; spreadBy: string }[] = [];
    const raised: { type: string; data: Record<string, unknown> }[] = [];
    const deps = {
      ...sweepDeps(),
      metrics: {
        count: async (domain: string, counts: Record<string, number>, spreadBy: string) => {
          counted.push({ domain, counts, spreadBy });
        },
      },
      events: {
        subscriptions: async () => ({
          wants: () => true,
          publish: async (events: { type: string; data: Record<string, unknown> }[]) => {
            raised.push(...events);
          },
        }),
      },
    };
    expect(await dispatchScheduled(deps)).toMatchObject({ failedUnknownOutcome: 1 });
    expect(counted).toEqual([{ domain: 'acme.com', counts: { failed: 1 }, spreadBy: unanswered }]);
    expect(raised.map((e) => [e.type, e.data.email_id])).toEqual([['email.failed', unanswered]]);
    // Ended once: the next run finds it final, and counts and raises nothing more.
    await dispatchScheduled(deps);
    expect(counted).toHaveLength(1);
    expect(raised).toHaveLength(1);
  });

  it('queues again within minutes one marked queued whose message never went (the send path died between)', async () => {
    // Stored as the send path stores one due within 90 s, marked as queued by it: then nothing.
    const lost = await scheduled(30_000, { dispatched: true });
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ dispatched: 0, requeued: 0 });
    now += 30_000 + LOST_DISPATCH_AFTER_MS - 1000;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ requeued: 0 });
    now += 2000;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ requeued: 1 });
    expect(queue.jobs).toEqual([{ id: lost, content: null, key_id: keyId, delaySeconds: 0 }]);
    // Once, not at every run after.
    now += 60_000;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ requeued: 0 });
  });

  it('leaves one SES refused to its own retries: not queued again before the sweeper’s rule', async () => {
    const refused = await scheduled(10_000, { dispatched: true });
    now += 10_000;
    // Claimed, refused by SES (throttled), released: its message comes back after the visibility timeout.
    await emails.claim(refused, now);
    await emails.release(refused, now, now);
    now += LOST_DISPATCH_AFTER_MS + 1000;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ requeued: 0 });
    now += awsSweepSettings.requeueAfterMs;
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ requeued: 1 });
  });

  it('leaves the due index when sent or ended, so a run reads only what waits', async () => {
    const sent = await scheduled(1000);
    const canceled = await scheduled(1000);
    const waiting = await scheduled(1000);
    now += 1000;
    await emails.claim(sent, now);
    await emails.markSent(sent, 'ses-1', new Date(now).toISOString());
    await cancelEmail({ emails, clock }, canceled);
    expect(await dueIds(new Date(now).toISOString())).toEqual([waiting]);
    expect((await emails.getState(sent))?.due_indexed).toBeUndefined();
  });

  it('leaves the due index in the write of a delivery that comes before the consumer recorded the send', async () => {
    const delivered = await scheduled(1000);
    now += 1000;
    await emails.claim(delivered, now);
    // SES took it; the consumer's own record of the send is late, the delivery event is not.
    await emails.settleRecipients(delivered, {
      addresses: ['a@example.com'],
      outcome: 'delivered',
      at: new Date(now).toISOString(),
      sent: { at: new Date(now).toISOString(), providerMessageId: 'ses-1' },
      event: { type: 'delivered', at: new Date(now).toISOString(), recipients: ['a@example.com'] },
    });
    expect((await emails.getState(delivered))?.status).toBe('delivered');
    expect(await dueIds(new Date(now + 86_400_000).toISOString())).toEqual([]);
  });

  it('a dead letter cannot end a scheduled email before its time (it is not due for the consumer yet)', async () => {
    const id = await scheduled(3_600_000);
    const at = () => new Date(now).toISOString();
    expect(await emails.finish(id, 'failed', at(), { reason: 'dead letter', as: 'endUnsent' })).toBe(false);
    expect((await emails.getState(id))?.status).toBe('queued');
    now += 3_600_000;
    expect(await emails.finish(id, 'failed', at(), { reason: 'dead letter', as: 'endUnsent' })).toBe(true);
  });

  it('an email due soon that the queue refused is unmarked, so the next run queues it (single and batch)', async () => {
    const refusing = {
      enqueue: async () => Promise.reject(new Error('queue down')),
      enqueueMany: async () => Promise.reject(new Error('queue down')),
      backlog: async () => 0,
    };
    const deps = {
      emails,
      queue: refusing,
      clock,
      assertSenderDomain: async () => undefined,
    } as unknown as SendEmailDeps;
    const due = new Date(now + 30_000).toISOString();
    const single = await sendEmail(deps, sendInput(), undefined, { at: due, key_id: keyId });
    const batch = await sendBatch(deps, {
      entries: [{ index: 0, input: { ...sendInput(), scheduled_at: due } }],
      errors: [],
      mode: 'strict',
      keyId,
      checkSender: async () => undefined,
    });
    const ids = [single.id, ...batch.data.map((e) => e.id)];
    expect(await dispatchScheduled(sweepDeps())).toMatchObject({ dispatched: 2 });
    expect(queue.jobs.map((job) => job.id).sort()).toEqual(ids.sort());
  });

  it('queues every due email again when asked to (a local start lost the queue)', async () => {
    const id = await scheduled(5_000, { dispatched: true });
    expect((await dispatchScheduled(sweepDeps())).dispatched).toBe(0);
    expect((await dispatchScheduled(sweepDeps(), { all: true })).dispatched).toBe(1);
    expect(queue.jobs.map((job) => job.id)).toEqual([id]);
  });
});

describe('the scheduler and the sweeper: a scheduled function each', () => {
  it('a failing scheduler fails its own run, and the sweeper still fails the dead letters in its own', async () => {
    const dead = newEmailId();
    await emails.create({ id: dead, created_at: new Date(now).toISOString(), content: emailContent() });
    const deadLetters: DeadLetters = {
      messages: [{ job: { id: dead, content: emailContent() }, messageId: 'm-1' }],
      async receive(max: number) {
        return this.messages.splice(0, max);
      },
    } as DeadLetters & { messages: unknown[] };
    const throttled = Object.assign(Object.create(store), {
      dueIn: async () =>
        Promise.reject(
          Object.assign(new Error('Throughput exceeds the index'), { name: 'ThrottlingException' }),
        ),
    });
    const scheduler = makeSchedulerFunction({ ...sweepDeps(), store: throttled });
    await expect(scheduler()).rejects.toThrow('Throughput exceeds the index');
    const sweeper = makeSweepFunction({ ...sweepDeps(), store: throttled, deadLetters });
    expect(await sweeper()).toMatchObject({ failedFromDeadLetters: 1 });
    expect((await emails.getState(dead))?.status).toBe('failed');
  });
});

describe('the consumer and a scheduled email (dynalite)', () => {
  it('sends it once it is due, with its key still there', async () => {
    const id = await scheduled(1000);
    const mailer = new ScriptedMailer();
    now += 1000;
    expect((await consumer(mailer)(sqsEvent([message(id)]))).batchItemFailures).toEqual([]);
    expect(mailer.sent.map((job) => job.id)).toEqual([id]);
    expect((await emails.getState(id))?.sent_at).toBeDefined();
  });

  it('puts a message that came before its time back on the queue, delayed; later than 15 minutes, leaves it to the scheduler', async () => {
    const id = await scheduled(120_000);
    const requeue = new RecordingQueue();
    const mailer = new ScriptedMailer();
    await consumer(mailer, requeue)(sqsEvent([message(id)]));
    expect(mailer.sent).toEqual([]);
    expect(requeue.jobs).toEqual([{ id, content: null, key_id: keyId, delaySeconds: 120 }]);
    // A claim alone refuses it too (a message without a key, of an email moved later).
    expect(await emails.claim(id, now)).toBe('not_due');
    const far = await scheduled(3_600_000);
    await consumer(mailer, requeue)(sqsEvent([message(far)]));
    expect(requeue.jobs).toHaveLength(1);
    expect(mailer.sent).toEqual([]);
  });

  it('ends it failed, unsent, when its key was revoked before it was due', async () => {
    const { key } = generateApiKey('short-lived', 'sending_access', new Date(now));
    await apiKeys.put(key);
    const id = await scheduled(1000, { key: key.id });
    await apiKeys.deleteByHash(key.hash);
    now += 1000;
    const mailer = new ScriptedMailer();
    await consumer(mailer)(sqsEvent([message(id, key.id)]));
    expect(mailer.sent).toEqual([]);
    const email = await emails.get(id);
    expect(email).toMatchObject({ status: 'failed', last_event: 'failed' });
    expect(email?.failure_reason).toMatch(/API key that scheduled it \(.+\) was revoked before it was due/);
  });
});

/**
 * The consumer's claim and a cancel's (or reschedule's) write, held until both have reached them and
 * then sent together, one a tick before the other by turns: the two conditional writes on the same
 * item really race in the emulator.
 */
function coinciding(run: number) {
  let arrived = 0;
  let release: () => void = () => undefined;
  const both = new Promise<void>((resolve) => {
    release = resolve;
  });
  const arrive = async (first: boolean) => {
    if (++arrived === 2) release();
    await both;
    if (first !== (run % 2 === 0)) await new Promise((resolve) => setImmediate(resolve));
  };
  const held = <K extends 'claim' | 'finish' | 'reschedule'>(name: K, first: boolean) =>
    (async (...args: unknown[]) => {
      await arrive(first);
      return (emails[name] as (...a: unknown[]) => unknown).apply(emails, args);
    }) as DynamoEmailRepository[K];
  return {
    send: Object.assign(Object.create(emails), { claim: held('claim', true) }) as DynamoEmailRepository,
    change: Object.assign(Object.create(emails), {
      finish: held('finish', false),
      reschedule: held('reschedule', false),
    }) as DynamoEmailRepository,
  };
}

describe('cancel and reschedule against the send, forced to coincide (dynalite)', () => {
  it('a cancel as it falls due: either nothing is sent, or the cancel is refused and it is sent once', async () => {
    const outcomes = { canceled: 0, sent: 0 };
    for (let run = 0; run < 60; run++) {
      const id = await scheduled(0);
      const mailer = new ScriptedMailer();
      const race = coinciding(run);
      const [, refused] = await Promise.all([
        makeConsumer({ emails: race.send, apiKeys, mailer, clock, maxReceiveCount: 5 })(
          sqsEvent([message(id)]),
        ),
        refusal(cancelEmail({ emails: race.change, clock }, id)),
      ]);
      const state = await emails.getState(id);
      if (refused) {
        expect(refused.statusCode).toBe(400);
        expect(refused.message).toMatch(/being sent|already sent/);
        expect(mailer.sent).toHaveLength(1);
        expect(state?.sent_at).toBeDefined();
        outcomes.sent++;
      } else {
        expect(mailer.sent).toEqual([]);
        expect(state).toMatchObject({ status: 'failed', canceled: true });
        outcomes.canceled++;
      }
    }
    // Both orders happened: the race was real.
    expect(outcomes.canceled).toBeGreaterThan(0);
    expect(outcomes.sent).toBeGreaterThan(0);
  });

  it('a reschedule as it falls due: either it waits for its new time, or the reschedule is refused and it is sent once', async () => {
    const outcomes = { moved: 0, sent: 0 };
    for (let run = 0; run < 40; run++) {
      const id = await scheduled(0);
      const mailer = new ScriptedMailer();
      const requeue = new RecordingQueue();
      const race = coinciding(run);
      const [, refused] = await Promise.all([
        makeConsumer({ emails: race.send, apiKeys, mailer, clock, maxReceiveCount: 5, queue: requeue })(
          sqsEvent([message(id)]),
        ),
        refusal(rescheduleEmail({ emails: race.change, queue, clock }, id, 'in 1 hour')),
      ]);
      const state = await emails.getState(id);
      if (refused) {
        expect(refused.statusCode).toBe(400);
        expect(mailer.sent).toHaveLength(1);
        outcomes.sent++;
      } else {
        outcomes.moved++;
        expect(mailer.sent).toEqual([]);
        expect(state?.scheduled_at).toBe(new Date(now + 3_600_000).toISOString());
        expect(state?.send_started_at).toBeUndefined();
      }
    }
    expect(outcomes.moved).toBeGreaterThan(0);
    expect(outcomes.sent).toBeGreaterThan(0);
  });

  it('refuses to change what is not waiting, and answers 404 for an unknown id', async () => {
    const plain = newEmailId();
    await emails.create({ id: plain, created_at: new Date(now).toISOString(), content: emailContent() });
    expect((await refusal(cancelEmail({ emails, clock }, plain)))?.message).toMatch(/was not scheduled/);
    const id = await scheduled(60_000);
    await cancelEmail({ emails, clock }, id);
    // A second cancel changes nothing and answers as the first did.
    expect(await cancelEmail({ emails, clock }, id)).toEqual({ object: 'email', id });
    expect((await refusal(rescheduleEmail({ emails, queue, clock }, id, 'in 2 hours')))?.message).toMatch(
      /was canceled/,
    );
    expect((await refusal(cancelEmail({ emails, clock }, newEmailId())))?.statusCode).toBe(404);
  });

  it('a reschedule to soon queues it at once, held until then; to later leaves it to the scheduler', async () => {
    const id = await scheduled(3_600_000);
    await rescheduleEmail({ emails, queue, clock }, id, 'in 1 min');
    expect(queue.jobs).toEqual([{ id, content: null, key_id: keyId, delaySeconds: 60 }]);
    expect((await emails.getState(id))?.dispatched).toBe(new Date(now + 60_000).toISOString());
    await rescheduleEmail({ emails, queue, clock }, id, 'in 3 hours');
    expect(queue.jobs).toHaveLength(1);
    expect((await emails.getState(id))?.dispatched).toBeUndefined();
    const due = await dueIds(new Date(now + 4 * 3_600_000).toISOString());
    expect(due).toEqual([id]);
    const job = queue.jobs[0] as DueJob;
    expect(job.key_id).toBe(keyId);
  });
});

describe('the local table move (dynalite)', () => {
  it('finishes at the next start a move that a kill stopped midway, from its backup', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'table-move-'));
    try {
      const backup = join(dir, 'table-move.json');
      const items = [
        { pk: { S: 'EMAIL#a' }, sk: { S: 'STATUS' }, status: { S: 'queued' }, done: { NS: ['0'] } },
        { pk: { S: 'EMAIL#a' }, sk: { S: 'BODY' }, raw: { B: new Uint8Array([1, 2, 3]) } },
      ];
      writeFileSync(
        backup,
        JSON.stringify(items, (_, v) =>
          v instanceof Uint8Array ? { $b64: Buffer.from(v).toString('base64') } : v,
        ),
      );
      // The table was deleted and not yet made again when the start died.
      await ensureTable(table.client, 'moved-table', backup);
      const { Items = [] } = await table.client.send(new ScanCommand({ TableName: 'moved-table' }));
      expect(Items).toHaveLength(2);
      expect(Items.find((item) => item.sk?.S === 'BODY')?.raw?.B).toEqual(new Uint8Array([1, 2, 3]));
      expect(existsSync(backup)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
