/**
 * The broadcast lane's consumer (issue 41): its handler with SQS event shapes, the table on
 * dynalite. The gate for broadcast emails (a contact unsubscribed from everything since the fan-out
 * is withheld; every email gets its own List-Unsubscribe and List-Unsubscribe-Post), the cancel
 * check before the claim (the broadcast item's status, cached about a second), and the sweeper's
 * routing of stranded broadcast emails back to the lane, with the lane's dead-letter queue read.
 */
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contactIdItem, contactItem } from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoBroadcastStates } from '../../functions/adapters/dynamodb/broadcast-states.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoSweepStore } from '../../functions/adapters/dynamodb/sweep-store.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { BROADCAST_CANCELED_REASON } from '../../functions/emails/broadcast-lane.js';
import type { DeadLetters, QueuedJob, SendJob } from '../../functions/emails/ports.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { sweep } from '../../functions/emails/sweep.js';
import { makeHandler as makeLaneConsumer } from '../../functions/handlers/process-broadcast-queue.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import type { UnsubscribeLinkInput, UnsubscribeLinks } from '../../functions/unsubscribe/links.js';
import { context, sqsEvent } from '../support/events.js';
import { awsSweepSettings, emailContent, RecordingQueue, ScriptedMailer } from '../support/fakes.js';
import { emailIdCreatedAt } from '../support/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let emails: DynamoEmailRepository;
let audience: DynamoAudienceReads;
let nowMs = Date.now();
const clock = { now: () => new Date(nowMs) };
const asked: UnsubscribeLinkInput[] = [];
const links: UnsubscribeLinks = {
  url: async (input) => {
    asked.push(input);
    return `https://mail.acme.test/unsubscribe/${input.topicId ?? 'all'}.${input.emailId}`;
  },
};

const put = (Item: Record<string, unknown>) =>
  table.db.send(new PutCommand({ TableName: table.tableName, Item }));

async function newContact(email: string, unsubscribed = false): Promise<Contact> {
  const at = new Date(nowMs).toISOString();
  const contact: Contact = {
    id: newUuid(),
    email,
    first_name: null,
    last_name: null,
    unsubscribed,
    props: {},
    created_at: at,
    updated_at: at,
  };
  await table.db.send(
    new BatchWriteCommand({
      RequestItems: {
        [table.tableName]: [contactItem(contact), contactIdItem(contact)].map((Item) => ({
          PutRequest: { Item },
        })),
      },
    }),
  );
  return contact;
}

/** A broadcast (only what the lane reads of its item: its status). */
async function newBroadcast(status: string): Promise<string> {
  const id = newUuid();
  await put({ pk: keys.broadcasts, sk: keys.broadcast(id), id, status });
  return id;
}

/** A broadcast email as the fan-out makes it (createMany, mayExist), and its lane job. */
async function fannedOut(broadcastId: string, address: string, over: Partial<SendJob['content']> = {}) {
  const job: SendJob = {
    id: newEmailId(),
    content: emailContent({
      from: 'news@acme.test',
      to: [address],
      subject: 'News',
      broadcast_id: broadcastId,
      ...over,
    }),
  };
  await emails.createMany([{ id: job.id, created_at: new Date(nowMs).toISOString(), content: job.content }], {
    mayExist: true,
  });
  return job;
}

const consumer = (mailer: ScriptedMailer, over: Record<string, unknown> = {}) =>
  makeLaneConsumer({
    emails,
    mailer,
    clock,
    maxReceiveCount: 3,
    audience,
    unsubscribeLinks: links,
    lane: 'broadcast',
    broadcastStates: new DynamoBroadcastStates(table.db, table.tableName, { now: () => nowMs }),
    ...over,
  });
const lane = (jobs: SendJob[]) =>
  sqsEvent(jobs.map((job, i) => ({ body: toQueueMessage(job), messageId: `m-${i}` })));

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  audience = new DynamoAudienceReads(table.db, table.tableName);
});
afterAll(() => table?.stop());
beforeEach(() => {
  nowMs = Date.now();
  asked.length = 0;
});

describe('the gate for broadcast emails', () => {
  it('gives a broadcast email without a topic its own global List-Unsubscribe link and List-Unsubscribe-Post', async () => {
    const broadcast = await newBroadcast('sending');
    const contact = await newContact(`ada-${newUuid()}@example.com`);
    const job = await fannedOut(broadcast, contact.email);
    const mailer = new ScriptedMailer();
    expect(await consumer(mailer)(lane([job]), context())).toEqual({ batchItemFailures: [] });
    expect(mailer.sent).toHaveLength(1);
    expect(asked).toEqual([{ address: contact.email, topicId: null, emailId: job.id }]);
    expect(mailer.sent[0]?.content.headers).toEqual({
      'List-Unsubscribe': `<https://mail.acme.test/unsubscribe/all.${job.id}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect((await emails.get(job.id))?.last_event).toBe('sent');
  });

  it('withholds it from a contact unsubscribed from everything since the fan-out: never handed to SES', async () => {
    const broadcast = await newBroadcast('sending');
    const contact = await newContact(`gone-${newUuid()}@example.com`, true);
    const job = await fannedOut(broadcast, contact.email);
    const mailer = new ScriptedMailer();
    await consumer(mailer)(lane([job]), context());
    expect(mailer.sent).toHaveLength(0);
    const stored = await emails.get(job.id);
    expect(stored?.status).not.toBe('queued');
    expect(stored?.failure_reason).toContain('unsubscribed');
  });

  it('sends a transactional email (no broadcast_id) to an unsubscribed contact as ever, with no header added', async () => {
    const contact = await newContact(`tx-${newUuid()}@example.com`, true);
    const job: SendJob = { id: newEmailId(), content: emailContent({ to: [contact.email] }) };
    await emails.createMany([
      { id: job.id, created_at: new Date(nowMs).toISOString(), content: job.content },
    ]);
    const mailer = new ScriptedMailer();
    await consumer(mailer)(lane([job]), context());
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]?.content.headers).toEqual({});
    expect(asked).toEqual([]);
  });
});

describe('cancel, before the claim', () => {
  it('ends an email of a canceled broadcast unsent (failed, canceled, why), SES never called', async () => {
    const broadcast = await newBroadcast('canceled');
    const job = await fannedOut(broadcast, `c-${newUuid()}@example.com`);
    const mailer = new ScriptedMailer();
    expect(await consumer(mailer)(lane([job]), context())).toEqual({ batchItemFailures: [] });
    expect(mailer.sent).toHaveLength(0);
    const stored = await emails.get(job.id);
    expect(stored).toMatchObject({
      status: 'failed',
      failure_reason: BROADCAST_CANCELED_REASON,
      last_event: 'canceled',
    });
  });

  it('asks again just before the claim: a cancel while the email waited for its slot stops it', async () => {
    const broadcast = await newBroadcast('sending');
    const job = await fannedOut(broadcast, `w-${newUuid()}@example.com`);
    const states = new DynamoBroadcastStates(table.db, table.tableName, { now: () => nowMs, ttlMs: 1_000 });
    const mailer = new ScriptedMailer();
    // Booked at once; canceled "while it waited" (the cache a second older by then).
    const pacer = {
      reserve: async (_d: number, now: number) => {
        await put({ pk: keys.broadcasts, sk: keys.broadcast(broadcast), id: broadcast, status: 'canceled' });
        nowMs += 1_500;
        return { startAt: now };
      },
    };
    const limits = {
      current: async () => ({ ratePerSecond: 14 }),
      sent: () => undefined,
      refused: () => undefined,
    };
    await consumer(mailer, { broadcastStates: states, pace: { pacer, limits } })(lane([job]), context());
    expect(mailer.sent).toHaveLength(0);
    expect((await emails.get(job.id))?.failure_reason).toBe(BROADCAST_CANCELED_REASON);
  });

  it('reads the broadcast’s status about once a second per container; a broadcast not found is not canceled', async () => {
    const broadcast = await newBroadcast('sending');
    let reads = 0;
    const counting = {
      send: (command: unknown) => {
        reads++;
        return table.db.send(command as PutCommand);
      },
    } as unknown as typeof table.db;
    const states = new DynamoBroadcastStates(counting, table.tableName, { now: () => nowMs });
    expect(await states.canceled(broadcast)).toBe(false);
    await put({ pk: keys.broadcasts, sk: keys.broadcast(broadcast), id: broadcast, status: 'canceled' });
    nowMs += 500;
    expect(await states.canceled(broadcast)).toBe(false);
    expect(reads).toBe(1);
    nowMs += 600;
    expect(await states.canceled(broadcast)).toBe(true);
    expect(reads).toBe(2);
    expect(await states.canceled(newUuid())).toBe(false);
  });
});

describe('the sweeper and the lane', () => {
  const deadLettersOf = (messages: { job?: QueuedJob; messageId: string }[]): DeadLetters => ({
    receive: async (max) => messages.splice(0, max),
  });

  it('puts a stranded broadcast email back on the lane, never on the send queue; a transactional one on the send queue', async () => {
    const fresh = await startTestTable();
    try {
      const repo = new DynamoEmailRepository(fresh.db, fresh.tableName);
      const now = Date.now();
      const at = (ms: number) => ({
        id: emailIdCreatedAt(now - ms),
        created_at: new Date(now - ms).toISOString(),
      });
      const stranded = {
        ...at(21 * 60_000),
        content: emailContent({ to: ['b@example.com'], broadcast_id: newUuid() }),
      };
      const transactional = { ...at(22 * 60_000), content: emailContent({ to: ['t@example.com'] }) };
      await repo.createMany([stranded, transactional]);
      const sendQueue = new RecordingQueue();
      const laneQueue = new RecordingQueue();
      const report = await sweep({
        emails: repo,
        store: new DynamoSweepStore(fresh.db, fresh.tableName),
        queue: sendQueue,
        deadLetters: deadLettersOf([]),
        lane: { queue: laneQueue, deadLetters: deadLettersOf([]) },
        clock: { now: () => new Date(now) },
        settings: awsSweepSettings,
      });
      expect(report.requeued).toBe(2);
      expect(laneQueue.jobs.map((j) => j.id)).toEqual([stranded.id]);
      expect(sendQueue.jobs.map((j) => j.id)).toEqual([transactional.id]);
      expect(laneQueue.jobs[0]).toMatchObject({
        requeued: true,
        content: { broadcast_id: stranded.content.broadcast_id },
      });
    } finally {
      await fresh.stop();
    }
  });

  it('waits while the lane has a backlog the stranded broadcast email may be waiting in (not the send queue’s)', async () => {
    const fresh = await startTestTable();
    try {
      const repo = new DynamoEmailRepository(fresh.db, fresh.tableName);
      const now = Date.now();
      const id = emailIdCreatedAt(now - 21 * 60_000);
      await repo.createMany([
        {
          id,
          created_at: new Date(now - 21 * 60_000).toISOString(),
          content: emailContent({ broadcast_id: newUuid() }),
        },
      ]);
      const laneQueue = new RecordingQueue();
      laneQueue.waiting = 2_000;
      const report = await sweep({
        emails: repo,
        store: new DynamoSweepStore(fresh.db, fresh.tableName),
        queue: new RecordingQueue(),
        deadLetters: deadLettersOf([]),
        lane: { queue: laneQueue, deadLetters: deadLettersOf([]) },
        clock: { now: () => new Date(now) },
        settings: awsSweepSettings,
      });
      expect(report).toMatchObject({ requeued: 0, deferred: 1 });
      expect(laneQueue.jobs).toEqual([]);
    } finally {
      await fresh.stop();
    }
  });

  it("fails a broadcast email whose message reached the lane's dead-letter queue", async () => {
    const job = await fannedOut(newUuid(), `dl-${newUuid()}@example.com`);
    const report = await sweep({
      emails,
      store: new DynamoSweepStore(table.db, table.tableName),
      queue: new RecordingQueue(),
      deadLetters: deadLettersOf([]),
      lane: { queue: new RecordingQueue(), deadLetters: deadLettersOf([{ job, messageId: 'dl-1' }]) },
      clock,
      settings: awsSweepSettings,
    });
    expect(report.failedFromDeadLetters).toBe(1);
    expect((await emails.get(job.id))?.status).toBe('failed');
  });
});
