/**
 * The audience clean-up (issue 40): what a deleted segment, topic or contact leaves behind, removed
 * by the `clean-up-audience` worker through its handler, with its jobs carried on the queue (fauxqs)
 * by the SQS adapter, the table on dynalite: a job larger than a run carries on in a job of its own,
 * a run that fails part-way is taken again from its own message, and nothing else is touched.
 */
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoAudienceCleanupStore } from '../../functions/adapters/dynamodb/audience-cleanup-store.js';
import {
  choiceItem,
  choiceKey,
  contactIdItem,
  contactItem,
  contactKey,
  contactShard,
  membershipItem,
  membershipKey,
  segmentItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { batchGetAll } from '../../functions/adapters/dynamodb/client.js';
import {
  CLEANUP_SETTLE_SECONDS,
  SqsAudienceCleanup,
} from '../../functions/adapters/sqs/audience-cleanup-queue.js';
import type { CleanupJob } from '../../functions/contacts/cleanup-jobs.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { makeHandler } from '../../functions/handlers/clean-up-audience.js';
import { newUuid } from '../../functions/shared/ids.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { sqsEvent } from '../support/events.js';
import { startTestTable, type TestTable } from '../support/table.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const T = '2026-11-28T10:00:00.000Z';

let emulators: Emulators;
let table: TestTable;
let sqs: SQSClient;
let queueUrl: string;

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0 });
  table = await startTestTable();
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  ({ QueueUrl: queueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: 'audience-cleanup' })));
});
afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
  await table?.stop();
});

async function putAll(items: Record<string, unknown>[]) {
  for (let i = 0; i < items.length; i += 25)
    await table.db.send(
      new BatchWriteCommand({
        RequestItems: { [table.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
}

/** How many of these items are stored (one BatchGetItem per 100). */
const stored = async (keyList: Record<string, unknown>[]) =>
  (await batchGetAll(table.db, table.tableName, keyList, undefined, true)).length;

const exists = async (key: Record<string, unknown>) =>
  (await table.db.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true })))
    .Item !== undefined;

async function seedContact(): Promise<Contact> {
  const contact: Contact = {
    id: newUuid(),
    email: `c-${newUuid()}@example.com`,
    first_name: null,
    last_name: null,
    unsubscribed: false,
    props: {},
    created_at: T,
    updated_at: T,
  };
  await table.db.send(new PutCommand({ TableName: table.tableName, Item: contactItem(contact) }));
  await table.db.send(new PutCommand({ TableName: table.tableName, Item: contactIdItem(contact) }));
  return contact;
}

/**
 * Runs the worker as SQS would: every message on the queue handed to the handler, deleted when the
 * handler reports it done, until the queue is empty; a failed one is handed again (its redelivery).
 */
async function drain(handler: ReturnType<typeof makeHandler>) {
  let runs = 0;
  let failures = 0;
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    if (Messages.length === 0) return { runs, failures };
    for (const message of Messages) {
      for (;;) {
        runs += 1;
        const result = await handler(sqsEvent([{ body: message.Body ?? '', messageId: message.MessageId }]));
        if (result.batchItemFailures.length === 0) break;
        failures += 1;
        if (failures > 10) throw new Error('the clean-up keeps failing');
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
    }
  }
}

describe('the audience clean-up', () => {
  it("removes a deleted segment's memberships over its shards, 25 a run, and nothing else", async () => {
    const segment = newUuid();
    const other = newUuid();
    // Memberships need no contact item: five contacts are stored, to show none is deleted.
    const contacts = [
      ...(await Promise.all(Array.from({ length: 5 }, () => seedContact()))),
      ...Array.from({ length: 65 }, () => ({ id: newUuid() })),
    ];
    // Members of every shard (the shards are a hash of the contact id).
    expect(new Set(contacts.map((c) => contactShard(c.id))).size).toBeGreaterThan(8);
    await putAll([
      ...contacts.map((c) => membershipItem({ contact_id: c.id, segment_id: segment, created_at: T })),
      ...contacts
        .slice(0, 5)
        .map((c) => membershipItem({ contact_id: c.id, segment_id: other, created_at: T })),
    ]);
    const queue = new SqsAudienceCleanup(sqs, queueUrl, 0);
    await queue.enqueue({ kind: 'segment', segment_id: segment });
    const { runs } = await drain(
      makeHandler({
        store: new DynamoAudienceCleanupStore(table.db, table.tableName),
        owners: new DynamoAudienceReads(table.db, table.tableName),
        cleanup: queue,
        maxDeletes: 25,
        log,
      }),
    );
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(await stored(contacts.map((c) => membershipKey(c.id, segment)))).toBe(0);
    expect(await stored(contacts.slice(0, 5).map((c) => membershipKey(c.id, other)))).toBe(5);
    // No contact is deleted.
    expect(await stored((contacts.slice(0, 5) as Contact[]).map((c) => contactKey(c.email)))).toBe(5);
  });

  it("removes a deleted topic's choices, and a deleted contact's memberships and choices", async () => {
    const topic = newUuid();
    const kept = newUuid();
    const segment = newUuid();
    const contacts = Array.from({ length: 30 }, () => ({ id: newUuid() }));
    const [gone, stays] = contacts as [{ id: string }, { id: string }];
    await putAll([
      ...contacts.map((c) =>
        choiceItem({ contact_id: c.id, topic_id: topic, subscription: 'opt_out', updated_at: T }),
      ),
      choiceItem({ contact_id: gone.id, topic_id: kept, subscription: 'opt_in', updated_at: T }),
      choiceItem({ contact_id: stays.id, topic_id: kept, subscription: 'opt_in', updated_at: T }),
      membershipItem({ contact_id: gone.id, segment_id: segment, created_at: T }),
      membershipItem({ contact_id: stays.id, segment_id: segment, created_at: T }),
    ]);
    const queue = new SqsAudienceCleanup(sqs, queueUrl, 0);
    const handler = makeHandler({
      store: new DynamoAudienceCleanupStore(table.db, table.tableName),
      owners: new DynamoAudienceReads(table.db, table.tableName),
      cleanup: queue,
      maxDeletes: 10,
      log,
    });
    await queue.enqueue({ kind: 'topic', topic_id: topic });
    await drain(handler);
    expect(await stored(contacts.map((c) => choiceKey(c.id, topic)))).toBe(0);
    expect(await exists(choiceKey(gone.id, kept))).toBe(true);

    await queue.enqueue({ kind: 'contact', contact_id: gone.id });
    await drain(handler);
    expect(await exists(choiceKey(gone.id, kept))).toBe(false);
    expect(await exists(membershipKey(gone.id, segment))).toBe(false);
    expect(await exists(choiceKey(stays.id, kept))).toBe(true);
    expect(await exists(membershipKey(stays.id, segment))).toBe(true);
  });

  it('keeps every membership of a segment that still stands (its job queued, its delete then failed)', async () => {
    const segment = newUuid();
    const contacts = Array.from({ length: 5 }, () => ({ id: newUuid() }));
    await putAll([
      segmentItem({ id: segment, name: 'Still here', created_at: T }),
      ...contacts.map((c) => membershipItem({ contact_id: c.id, segment_id: segment, created_at: T })),
    ]);
    const queue = new SqsAudienceCleanup(sqs, queueUrl, 0);
    await queue.enqueue({ kind: 'segment', segment_id: segment });
    await drain(
      makeHandler({
        store: new DynamoAudienceCleanupStore(table.db, table.tableName),
        owners: new DynamoAudienceReads(table.db, table.tableName),
        cleanup: queue,
        log,
      }),
    );
    expect(await stored(contacts.map((c) => membershipKey(c.id, segment)))).toBe(5);
  });

  it('takes a run that failed part-way again from its own message: every membership goes', async () => {
    const segment = newUuid();
    const contacts = Array.from({ length: 60 }, () => ({ id: newUuid() }));
    await putAll(
      contacts.map((c) => membershipItem({ contact_id: c.id, segment_id: segment, created_at: T })),
    );
    let writes = 0;
    // The third BatchWriteItem fails (a crash, a throttle past the retries): the run's message fails.
    const crashing = {
      send: (command: unknown) => {
        if (command instanceof BatchWriteCommand && ++writes === 3) throw new Error('the function died');
        return table.db.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const queue = new SqsAudienceCleanup(sqs, queueUrl, 0);
    await queue.enqueue({ kind: 'segment', segment_id: segment });
    const { failures } = await drain(
      makeHandler({
        store: new DynamoAudienceCleanupStore(crashing, table.tableName),
        owners: new DynamoAudienceReads(table.db, table.tableName),
        cleanup: queue,
        maxDeletes: 25,
        log,
      }),
    );
    expect(failures).toBe(1);
    expect(await stored(contacts.map((c) => membershipKey(c.id, segment)))).toBe(0);
  });

  it('refuses a message that is not a clean-up job (reported, so it ends in the dead-letter queue)', async () => {
    const handler = makeHandler({
      store: new DynamoAudienceCleanupStore(table.db, table.tableName),
      owners: new DynamoAudienceReads(table.db, table.tableName),
      cleanup: new SqsAudienceCleanup(sqs, queueUrl, 0),
      log,
    });
    const result = await handler(
      sqsEvent([
        { body: JSON.stringify({ kind: 'segment' }), messageId: 'bad' },
        { body: JSON.stringify({ kind: 'segment', segment_id: newUuid() }), messageId: 'good' },
      ]),
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
  });
});

describe('the clean-up queue (SQS adapter)', () => {
  it('delays a new job until the listing indexes have caught up, and runs a job that carries on at once', async () => {
    const mock = mockClient(SQSClient);
    mock.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const client = new SQSClient({ region: 'us-east-1', credentials });
    const queue = new SqsAudienceCleanup(client, 'https://sqs.example/q');
    const jobs: CleanupJob[] = [
      { kind: 'segment', segment_id: 's' },
      { kind: 'segment', segment_id: 's', shard: 3, cursor: 'c' },
      { kind: 'contact', contact_id: 'c' },
      { kind: 'topic', topic_id: 't', shard: 1 },
    ];
    for (const job of jobs) await queue.enqueue(job);
    const sent = mock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(sent.map((input) => [JSON.parse(input.MessageBody ?? ''), input.DelaySeconds])).toEqual([
      [jobs[0], CLEANUP_SETTLE_SECONDS],
      [jobs[1], 0],
      [jobs[2], CLEANUP_SETTLE_SECONDS],
      [jobs[3], 0],
    ]);
    mock.restore();
  });

  it('carries a job to the queue as JSON (fauxqs)', async () => {
    const queue = new SqsAudienceCleanup(sqs, queueUrl, 0);
    const job: CleanupJob = { kind: 'topic', topic_id: newUuid(), shard: 2, cursor: newUuid() };
    await queue.enqueue(job);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(Messages.map((m) => JSON.parse(m.Body ?? ''))).toEqual([job]);
    for (const m of Messages)
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
  });
});
