/**
 * A broadcast's fan-out (issue 41) through its real paths: the `fan-out-broadcast` handler on SQS
 * events whose messages the fan-out queue's adapter carries on fauxqs, its emails on the broadcast
 * lane (fauxqs), the broadcast item, the segment's members, the contacts and the emails on dynalite.
 * The broadcast item is written as the API stores it (its shape in broadcasts/broadcast.ts); its
 * totals come from a fake reader (the tally keeps them).
 */
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { BatchWriteCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  choiceItem,
  contactIdItem,
  contactItem,
  membershipItem,
  propertyItem,
  segmentItem,
  topicItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoContactListing } from '../../functions/adapters/dynamodb/contact-listing.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoFanOutStore } from '../../functions/adapters/dynamodb/fan-out-store.js';
import { SqsBroadcastFanOutQueue } from '../../functions/adapters/sqs/broadcast-fanout-queue.js';
import { SqsBroadcastLane } from '../../functions/adapters/sqs/broadcast-lane.js';
import type { Broadcast, BroadcastTotals } from '../../functions/broadcasts/broadcast.js';
import { type FanOutOutcome, runFanOutStep } from '../../functions/broadcasts/fan-out.js';
import type { FanOutDeps } from '../../functions/broadcasts/fan-out-ports.js';
import type { Contact, Subscription } from '../../functions/contacts/contact.js';
import type { SendJob } from '../../functions/emails/ports.js';
import { makeHandler } from '../../functions/handlers/fan-out-broadcast.js';
import { newUuid } from '../../functions/shared/ids.js';
import { memoryQuotaStore, type SendQuota } from '../../functions/shared/pacing.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { sqsEvent } from '../support/events.js';
import { startTestTable, type TestTable } from '../support/table.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const PROPERTY = newUuid();

let emulators: Emulators;
let table: TestTable;
let sqs: SQSClient;
let fanOutUrl: string;
let laneUrl: string;
let emails: DynamoEmailRepository;

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0 });
  table = await startTestTable();
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  ({ QueueUrl: fanOutUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: 'broadcast-fanout' })));
  ({ QueueUrl: laneUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: 'broadcast-lane' })));
  emails = new DynamoEmailRepository(table.db, table.tableName);
  const at = new Date().toISOString();
  await put(
    propertyItem({
      id: PROPERTY,
      key: 'plan',
      type: 'string',
      fallback_value: 'free',
      created_at: at,
    } as never),
  );
});
afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
  await table?.stop();
});
beforeEach(async () => {
  await sqs.send(new PurgeQueueCommand({ QueueUrl: fanOutUrl }));
  await sqs.send(new PurgeQueueCommand({ QueueUrl: laneUrl }));
});

const put = (Item: Record<string, unknown>) =>
  table.db.send(new PutCommand({ TableName: table.tableName, Item }));

async function putAll(items: Record<string, unknown>[]) {
  for (let i = 0; i < items.length; i += 25)
    await table.db.send(
      new BatchWriteCommand({
        RequestItems: { [table.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
}

interface Seeded {
  segmentId: string;
  topicId: string;
  contacts: Contact[];
}

/** A segment of `count` contacts (and a topic): the i-th gets what `each(i)` says. */
async function seedSegment(
  count: number,
  each: (i: number) => {
    unsubscribed?: boolean;
    choice?: Subscription;
    first_name?: string;
    plan?: string;
  } = () => ({}),
  topicDefault: Subscription = 'opt_in',
): Promise<Seeded> {
  const segmentId = newUuid();
  const topicId = newUuid();
  const at = new Date(Date.now() - 60_000).toISOString();
  const items: Record<string, unknown>[] = [
    segmentItem({ id: segmentId, name: `s-${segmentId}`, created_at: at } as never),
    topicItem({
      id: topicId,
      name: `t-${topicId}`,
      description: null,
      default_subscription: topicDefault,
      visibility: 'public',
      created_at: at,
      updated_at: at,
    }),
  ];
  const contacts: Contact[] = [];
  for (let i = 0; i < count; i++) {
    const say = each(i);
    const contact: Contact = {
      id: newUuid(),
      email: `c${i}-${segmentId.slice(-8)}@example.com`,
      first_name: say.first_name ?? null,
      last_name: null,
      unsubscribed: say.unsubscribed ?? false,
      props: say.plan ? { [PROPERTY]: say.plan } : {},
      created_at: at,
      updated_at: at,
    };
    contacts.push(contact);
    items.push(contactItem(contact), contactIdItem(contact));
    items.push(membershipItem({ contact_id: contact.id, segment_id: segmentId, created_at: at }));
    if (say.choice)
      items.push(
        choiceItem({ contact_id: contact.id, topic_id: topicId, subscription: say.choice, updated_at: at }),
      );
  }
  await putAll(items);
  return { segmentId, topicId, contacts };
}

/** A broadcast item as the API writes it, queued for sending (generation 1). */
async function seedBroadcast(over: Partial<Broadcast>): Promise<Broadcast> {
  const broadcast: Broadcast = {
    id: newUuid(),
    name: 'Launch',
    segment_id: null,
    from: 'Acme <news@acme.test>',
    subject: 'Hi {{{contact.first_name|there}}}',
    reply_to: [],
    preview_text: null,
    html: '<p>Hello {{{FIRST_NAME|friend}}}, plan {{{contact.plan}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    text: 'Hello {{{contact.first_name|friend}}} {{{RESEND_UNSUBSCRIBE_URL}}}',
    topic_id: null,
    status: 'queued',
    created_at: new Date().toISOString(),
    scheduled_at: null,
    sent_at: null,
    generation: 1,
    ...over,
  };
  await put({ pk: 'BROADCASTS', sk: `BROADCAST#${broadcast.id}`, ...broadcast });
  return broadcast;
}

const ALL_HANDLED: BroadcastTotals = {
  sent: 1_000_000_000,
  delivered: 0,
  opened: 0,
  unique_opened: 0,
  clicked: 0,
  unique_clicked: 0,
  bounced: 0,
  complained: 0,
  unsubscribed: 0,
  suppressed: 0,
  ended: 0,
};

function depsFor(
  over: Partial<Omit<FanOutDeps, 'quota' | 'totals'>> & {
    quota?: SendQuota;
    totals?: () => BroadcastTotals;
  } = {},
): FanOutDeps {
  const quotaStore = memoryQuotaStore();
  void quotaStore.put(
    over.quota ?? { maxSendRate: 1000, max24HourSend: -1, sentLast24Hours: 0, sendingEnabled: true },
    Date.now(),
  );
  const totals = over.totals ?? (() => ALL_HANDLED);
  return {
    store: new DynamoFanOutStore(table.db, table.tableName),
    members: new DynamoContactListing(table.db, table.tableName),
    audience: new DynamoAudienceReads(table.db, table.tableName),
    emails,
    lane: new SqsBroadcastLane(sqs, laneUrl),
    queue: new SqsBroadcastFanOutQueue(sqs, fanOutUrl),
    unsubscribeLinks: {
      url: async ({ emailId, topicId }) => `https://mail.acme.test/unsubscribe/${emailId}/${topicId}`,
    },
    clock: { now: () => new Date() },
    log,
    ...(({ quota: _q, totals: _t, ...rest }) => rest)(over),
    quota: quotaStore,
    totals: { totals: async () => totals() },
  };
}

const stored = async (id: string) => {
  const broadcast = await new DynamoFanOutStore(table.db, table.tableName).get(id);
  if (!broadcast) throw new Error(`broadcast ${id} is gone`);
  return broadcast;
};

/**
 * Runs the fan-out queue's messages through the handler, as the event source does (a failed one
 * made visible again at once, standing for its redelivery), until none is left within `ms`.
 */
async function drainFanOut(deps: FanOutDeps, ms = 20_000, pageSize?: number | (() => number)) {
  const handler = makeHandler(deps);
  const deadline = Date.now() + ms;
  let idle = 0;
  while (Date.now() < deadline) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: fanOutUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }),
    );
    if (!Messages.length) {
      if (++idle >= 3) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    idle = 0;
    const [message] = Messages;
    if (!message) continue;
    const event = sqsEvent([{ body: message.Body ?? '', messageId: message.MessageId }]);
    const size = typeof pageSize === 'function' ? pageSize() : pageSize;
    const result = size ? await runPaged(deps, message.Body ?? '', size) : await handler(event);
    if (result.batchItemFailures.length)
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: fanOutUrl,
          ReceiptHandle: message.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    else
      await sqs.send(new DeleteMessageCommand({ QueueUrl: fanOutUrl, ReceiptHandle: message.ReceiptHandle }));
  }
  throw new Error('the fan-out queue did not drain in time');
}

/** The handler's work with small pages, one page a step (as a step whose time is up after each). */
async function runPaged(deps: FanOutDeps, body: string, pageSize: number) {
  try {
    await runFanOutStep(deps, JSON.parse(body), { pageSize, maxPages: 1 });
    return { batchItemFailures: [] };
  } catch {
    return { batchItemFailures: [{ itemIdentifier: 'x' }] };
  }
}

/** Every job on the lane (each message received once, then deleted). */
async function drainLane(): Promise<SendJob[]> {
  const jobs: SendJob[] = [];
  for (let empty = 0; empty < 2; ) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: laneUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!Messages.length) {
      empty++;
      continue;
    }
    for (const message of Messages) {
      jobs.push(JSON.parse(message.Body ?? '{}'));
      await sqs.send(new DeleteMessageCommand({ QueueUrl: laneUrl, ReceiptHandle: message.ReceiptHandle }));
    }
  }
  return jobs;
}

/** The broadcast's emails stored (status item and all), by recipient. */
async function emailsOf(broadcastId: string): Promise<Map<string, string[]>> {
  const summaries: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.db.send(
      new ScanCommand({
        TableName: table.tableName,
        FilterExpression: 'sk = :summary AND broadcast_id = :b',
        ExpressionAttributeValues: { ':summary': 'SUMMARY', ':b': broadcastId },
        ExclusiveStartKey: startKey,
      }),
    );
    summaries.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const ids = summaries.map((s) => String(s.pk).slice('EMAIL#'.length));
  const withStatus = new Set((await emails.states(ids)).map((s) => s.id));
  const byRecipient = new Map<string, string[]>();
  for (const summary of summaries) {
    const id = String(summary.pk).slice('EMAIL#'.length);
    if (!withStatus.has(id)) continue;
    const to = (summary.to as string[])[0] as string;
    byRecipient.set(to, [...(byRecipient.get(to) ?? []), id]);
  }
  return byRecipient;
}

const start = (deps: FanOutDeps, broadcast: Broadcast) =>
  deps.queue.next(broadcast.id, broadcast.generation, 0);

describe('the fan-out of a broadcast', () => {
  it('makes one email per contact sent to, rendered for it with its own unsubscribe link, skipping the unsubscribed and opted out, and marks it sent once every email is handled', async () => {
    const seeded = await seedSegment(
      6,
      (i) =>
        [
          { first_name: 'Ada', plan: 'pro', choice: 'opt_in' as const },
          { unsubscribed: true },
          { choice: 'opt_out' as const },
          {},
          { first_name: 'Tom & Jerry' },
          { plan: '' },
        ][i] ?? {},
    );
    const broadcast = await seedBroadcast({
      segment_id: seeded.segmentId,
      topic_id: seeded.topicId,
      preview_text: 'Our news',
    });
    let handled = false;
    const deps = depsFor({ totals: () => (handled ? ALL_HANDLED : { ...ALL_HANDLED, sent: 0 }) });
    const outcomes: FanOutOutcome[] = [];
    outcomes.push(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 }));
    expect(outcomes).toEqual(['finishing']);
    const fannedOut = await stored(broadcast.id);
    expect(fannedOut.status).toBe('sending');
    expect(fannedOut.sent_at).not.toBeNull();
    expect(fannedOut.fanout).toMatchObject({
      created: 4,
      skipped: { unsubscribed: 1, opted_out: 1 },
      done: true,
    });

    const made = await emailsOf(broadcast.id);
    const [ada, , , plain, tom, empty] = seeded.contacts as Contact[];
    expect([...made.keys()].sort()).toEqual([ada, plain, tom, empty].map((c) => c?.email).sort());
    const jobs = await drainLane();
    expect(jobs.map((j) => j.id).sort()).toEqual([...made.values()].flat().sort());
    const job = (contact: Contact | undefined) =>
      jobs.find((j) => j.content.to[0] === contact?.email) as SendJob;
    expect(job(ada).content).toMatchObject({
      from: broadcast.from,
      subject: 'Hi Ada',
      text: `Hello Ada https://mail.acme.test/unsubscribe/${job(ada).id}/${seeded.topicId}`,
      topic_id: seeded.topicId,
      broadcast_id: broadcast.id,
      headers: {},
      cc: [],
      bcc: [],
    });
    expect(job(ada).content.html).toBe(
      '<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">Our news</div>' +
        `<p>Hello Ada, plan pro</p><a href="https://mail.acme.test/unsubscribe/${job(ada).id}/${seeded.topicId}">Unsubscribe</a>`,
    );
    expect(job(plain).content.subject).toBe('Hi there');
    expect(job(plain).content.html).toContain('<p>Hello friend, plan free</p>');
    expect(job(tom).content.html).toContain('Hello Tom &amp; Jerry,');
    // Each its own link.
    expect(new Set(jobs.map((j) => j.content.text)).size).toBe(4);

    // Not every email handled: it stays sending; once they are, it is sent.
    expect(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 })).toBe('finishing');
    expect((await stored(broadcast.id)).status).toBe('sending');
    handled = true;
    expect(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 })).toBe('sent');
    const sent = await stored(broadcast.id);
    expect(sent.status).toBe('sent');
    expect(sent.sent_at).toBe(fannedOut.sent_at);
  });

  it('leaves out the members who joined the segment after the send began, and those of a topic whose default is opt-out without a choice', async () => {
    const seeded = await seedSegment(6, (i) => (i === 0 ? { choice: 'opt_in' } : {}), 'opt_out');
    const broadcast = await seedBroadcast({ segment_id: seeded.segmentId, topic_id: seeded.topicId });
    const deps = depsFor();
    expect(
      await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 }, { pageSize: 2, maxPages: 1 }),
    ).toBe('continued');
    // A new contact (an id after the cursor) and an old one, both joining after the send began.
    const late = await seedSegment(2, () => ({ choice: 'opt_in' }));
    const at = new Date(Date.now() + 1000).toISOString();
    await putAll(
      late.contacts.map((c) =>
        membershipItem({ contact_id: c.id, segment_id: seeded.segmentId, created_at: at }),
      ),
    );
    await putAll(
      late.contacts.map((c) =>
        choiceItem({ contact_id: c.id, topic_id: seeded.topicId, subscription: 'opt_in', updated_at: at }),
      ),
    );
    await drainFanOut(deps);
    const done = await stored(broadcast.id);
    expect(done.status).toBe('sent');
    expect(done.fanout).toMatchObject({ created: 1, skipped: { unsubscribed: 0, opted_out: 5 }, done: true });
    expect([...(await emailsOf(broadcast.id)).keys()]).toEqual([seeded.contacts[0]?.email]);
  });

  it('does nothing for a message of an old generation, a canceled broadcast, or one gone; a scheduled one waits for its time', async () => {
    const seeded = await seedSegment(3);
    const broadcast = await seedBroadcast({ segment_id: seeded.segmentId });
    const next: number[] = [];
    const deps = depsFor({ queue: { next: async (_id, _g, delayMs) => void next.push(delayMs) } });
    expect(
      await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 }, { pageSize: 1, maxPages: 1 }),
    ).toBe('continued');
    // Canceled by the API: generation + 1.
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: 'BROADCASTS', sk: `BROADCAST#${broadcast.id}` },
        UpdateExpression: 'SET #s = :c, generation = :g',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':c': 'canceled', ':g': 2 },
      }),
    );
    expect(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 })).toBe('dropped');
    expect(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 2 })).toBe('dropped');
    expect((await emailsOf(broadcast.id)).size).toBe(1);
    expect(await runFanOutStep(deps, { broadcast_id: newUuid(), generation: 1 })).toBe('dropped');

    const later = await seedBroadcast({
      segment_id: seeded.segmentId,
      status: 'scheduled',
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    next.length = 0;
    expect(await runFanOutStep(deps, { broadcast_id: later.id, generation: 1 })).toBe('not_due');
    expect(next).toEqual([900_000]);
    expect((await stored(later.id)).status).toBe('scheduled');
  });

  it("waits while SES's 24-hour quota is spent (queued, waiting, its detail) and while sending is paused, and takes no more than the quota leaves", async () => {
    const seeded = await seedSegment(5);
    const broadcast = await seedBroadcast({ segment_id: seeded.segmentId });
    const next: number[] = [];
    const queue = { next: async (_id: string, _g: number, delayMs: number) => void next.push(delayMs) };
    const spent = depsFor({
      queue,
      quota: { maxSendRate: 14, max24HourSend: 200, sentLast24Hours: 200, sendingEnabled: true },
    });
    expect(await runFanOutStep(spent, { broadcast_id: broadcast.id, generation: 1 })).toBe('waiting');
    const waiting = await stored(broadcast.id);
    expect(waiting.status).toBe('queued');
    expect(waiting.waiting).toMatchObject({ reason: 'quota' });
    expect(waiting.waiting?.detail).toContain("SES's 24-hour quota (200) is spent");
    expect(next).toEqual([300_000]);
    expect((await emailsOf(broadcast.id)).size).toBe(0);

    const paused = depsFor({
      queue,
      quota: { maxSendRate: 14, max24HourSend: -1, sentLast24Hours: 0, sendingEnabled: false },
    });
    expect(await runFanOutStep(paused, { broadcast_id: broadcast.id, generation: 1 })).toBe('waiting');
    expect((await stored(broadcast.id)).waiting).toMatchObject({ reason: 'paused' });

    // Three left of the quota: a page of three, then it waits again (the three still in the lane).
    const three = depsFor({
      queue,
      totals: () => ({ ...ALL_HANDLED, sent: 0 }),
      quota: { maxSendRate: 14, max24HourSend: 200, sentLast24Hours: 197, sendingEnabled: true },
    });
    expect(await runFanOutStep(three, { broadcast_id: broadcast.id, generation: 1 })).toBe('waiting');
    const partly = await stored(broadcast.id);
    expect(partly.fanout?.created).toBe(3);
    expect(partly.status).toBe('queued');
    // The quota back: the rest, and the waiting gone.
    expect(await runFanOutStep(depsFor({ queue }), { broadcast_id: broadcast.id, generation: 1 })).toBe(
      'sent',
    );
    const done = await stored(broadcast.id);
    expect(done.waiting).toBeUndefined();
    expect(done.fanout?.created).toBe(5);
  });

  it("takes a page only while the lane holds less than a minute of sending at the account's rate, else waits for it to drain", async () => {
    const seeded = await seedSegment(40);
    const broadcast = await seedBroadcast({ segment_id: seeded.segmentId });
    const next: number[] = [];
    let sent = 0;
    const deps = depsFor({
      queue: { next: async (_id, _g, delayMs) => void next.push(delayMs) },
      totals: () => ({ ...ALL_HANDLED, sent }),
      quota: { maxSendRate: 0.5, max24HourSend: -1, sentLast24Hours: 0, sendingEnabled: true },
    });
    // 0.5/s: 30 emails are a minute of sending.
    expect(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 })).toBe('paced');
    expect((await stored(broadcast.id)).fanout?.created).toBe(30);
    // 30 in the lane: 60 s of sending, less half a minute.
    expect(next).toEqual([30_000]);
    sent = 25;
    expect(await runFanOutStep(deps, { broadcast_id: broadcast.id, generation: 1 })).toBe('finishing');
    expect((await stored(broadcast.id)).fanout?.created).toBe(40);
  });
});

describe('a crash at any point of a page', () => {
  type Point = 'begin' | 'mid-create' | 'after-create' | 'after-enqueue' | 'after-checkpoint' | 'after-next';
  const POINTS: Point[] = [
    'begin',
    'mid-create',
    'after-create',
    'after-enqueue',
    'after-checkpoint',
    'after-next',
  ];

  /** The deps, with one crash at `point` on the `nth` time it is reached. */
  function crashing(deps: FanOutDeps, point: Point, nth: number): FanOutDeps {
    let reached = 0;
    /** True on the nth time the point is reached. */
    const hit = () => ++reached === nth;
    const crash = () => {
      if (hit()) throw new Error(`crash ${point}`);
    };
    const store = deps.store;
    return {
      ...deps,
      store: {
        get: (id) => store.get(id),
        begin: async (...args) => {
          const ok = await store.begin(...args);
          if (point === 'begin') crash();
          return ok;
        },
        checkpoint: async (...args) => {
          const ok = await store.checkpoint(...args);
          if (point === 'after-checkpoint') crash();
          return ok;
        },
        wait: (...args) => store.wait(...args),
        finish: (...args) => store.finish(...args),
      },
      emails: {
        states: (ids) => deps.emails.states(ids),
        createMany: async (list, options) => {
          if (point === 'mid-create' && hit()) {
            await deps.emails.createMany(list.slice(0, Math.ceil(list.length / 2)), options);
            throw new Error('crash mid-create');
          }
          const result = await deps.emails.createMany(list, options);
          if (point === 'after-create') crash();
          return result;
        },
      },
      lane: {
        enqueue: async (jobs) => {
          await deps.lane.enqueue(jobs);
          if (point === 'after-enqueue') crash();
        },
      },
      queue: {
        next: async (...args) => {
          await deps.queue.next(...args);
          if (point === 'after-next') crash();
        },
      },
    };
  }

  it.each(POINTS)('%s: every contact gets exactly one email, and every one is on the lane', async (point) => {
    const seeded = await seedSegment(23, (i) => (i % 7 === 3 ? { unsubscribed: true } : {}));
    const broadcast = await seedBroadcast({ segment_id: seeded.segmentId });
    const deps = crashing(depsFor(), point, point === 'begin' ? 1 : 2);
    await start(deps, broadcast);
    await drainFanOut(deps, 30_000, 5);
    const done = await stored(broadcast.id);
    expect(done.status).toBe('sent');
    const sendTo = seeded.contacts.filter((c) => !c.unsubscribed).map((c) => c.email);
    expect(done.fanout).toMatchObject({ created: sendTo.length, skipped: { unsubscribed: 3 }, done: true });
    const made = await emailsOf(broadcast.id);
    expect([...made.keys()].sort()).toEqual(sendTo.sort());
    expect([...made.values()].every((ids) => ids.length === 1)).toBe(true);
    // Every email made is on the lane (some twice after a crash: the claim sends each once).
    const onLane = new Set((await drainLane()).map((j) => j.id));
    expect([...made.values()].flat().every((id) => onLane.has(id))).toBe(true);
  });

  it('a page redone with fewer contacts than its first try (less of the quota left) still gives each contact one email', async () => {
    const seeded = await seedSegment(23);
    const broadcast = await seedBroadcast({ segment_id: seeded.segmentId });
    // The second page's emails are made, then the step dies before its checkpoint; the pages after
    // it, the redo among them, are smaller: a contact of the first try falls in another page.
    const deps = crashing(depsFor(), 'after-create', 2);
    await start(deps, broadcast);
    let steps = 0;
    await drainFanOut(deps, 30_000, () => (++steps <= 2 ? 5 : 3));
    expect((await stored(broadcast.id)).status).toBe('sent');
    const made = await emailsOf(broadcast.id);
    expect([...made.keys()].sort()).toEqual(seeded.contacts.map((c) => c.email).sort());
    expect([...made.values()].every((ids) => ids.length === 1)).toBe(true);
    await drainLane();
  });
});
