/**
 * Nothing dropped on a throttle: a publishing whose read of the webhook endpoints keeps failing
 * (or whose messages the queue refuses) keeps its events in the (emulated) table, and the
 * requeue-webhook-retries run publishes them late, then takes them out.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { keys, UNPUBLISHED_EVENT_SHARDS } from '../../functions/adapters/dynamodb/table.js';
import { DynamoUnpublishedEventStore } from '../../functions/adapters/dynamodb/unpublished-event-store.js';
import { DynamoWebhookBreakerRepository } from '../../functions/adapters/dynamodb/webhook-breaker-repository.js';
import { DynamoWebhookHoldStore } from '../../functions/adapters/dynamodb/webhook-held-store.js';
import { DynamoWebhookRetryStore } from '../../functions/adapters/dynamodb/webhook-retry-store.js';
import { emailEvent } from '../../functions/emails/events.js';
import { makeHandler as makeRequeueHandler } from '../../functions/handlers/requeue-webhook-retries.js';
import type { CounterName } from '../../functions/shared/ports.js';
import {
  type Delivery,
  deliveryFor,
  type Webhook,
  type WebhookEvent,
} from '../../functions/webhooks/model.js';
import {
  ENDPOINT_READS,
  publishQuietly,
  readOncePerInvocation,
  WebhookPublisher,
} from '../../functions/webhooks/publish.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let unpublished: DynamoUnpublishedEventStore;
beforeAll(async () => {
  table = await startTestTable();
  unpublished = new DynamoUnpublishedEventStore(table.db, table.tableName);
});
afterAll(async () => {
  await table?.stop();
});

const webhook = { id: 'wh_healthy', status: 'enabled', events: ['email.sent'] } as unknown as Webhook;
const throttling = () =>
  Object.assign(new Error('Throughput exceeds the current capacity of your table or index.'), {
    name: 'ThrottlingException',
  });

/** The endpoints, read `failing` times with a throttle first. */
const endpoints = (failing: number) => {
  const reads = { count: 0 };
  return {
    reads,
    all: async () => {
      reads.count++;
      if (reads.count <= failing) throw throttling();
      return [webhook];
    },
  };
};

class RecordingDeliveryQueue {
  readonly deliveries: Delivery[] = [];
  refuse = false;
  async enqueue(deliveries: Delivery[]) {
    if (this.refuse) throw Object.assign(new Error('queue down'), { name: 'ServiceUnavailable' });
    this.deliveries.push(...deliveries);
  }
}

let serial = 0;
const sent = (): WebhookEvent =>
  emailEvent(
    'email.sent',
    new Date(Date.parse('2026-11-28T03:00:00.000Z') + ++serial).toISOString(),
    { email_id: `em_${serial}`, from: 'a@b.test', subject: 's', tags: {} },
    ['x@y.test'],
  );

const keptItems = async () => {
  const found: Record<string, unknown>[] = [];
  for (let shard = 0; shard < UNPUBLISHED_EVENT_SHARDS; shard++) {
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.unpublishedEvent(shard) },
      }),
    );
    found.push(...Items);
  }
  return found;
};

let counted: CounterName[];
const counters = { count: (name: CounterName) => void counted.push(name) };
beforeEach(() => {
  counted = [];
});

const requeueRun = (queue: RecordingDeliveryQueue) =>
  makeRequeueHandler({
    retries: new DynamoWebhookRetryStore(table.db, table.tableName),
    webhooks: new DynamoWebhookBreakerRepository(table.db, table.tableName),
    held: new DynamoWebhookHoldStore(table.db, table.tableName),
    queue,
    clock: { now: () => new Date() },
    republish: {
      unpublished,
      events: new WebhookPublisher({ webhooks: endpoints(0), queue }),
      counters,
    },
  })(undefined, { getRemainingTimeInMillis: () => 60_000 });

describe('events whose endpoints read was throttled', () => {
  it('a read that fails once is tried again, and the event published at once', async () => {
    const queue = new RecordingDeliveryQueue();
    const webhooks = endpoints(1);
    const event = sent();
    const events = new WebhookPublisher({ webhooks, queue, unpublished });
    await publishQuietly({ events: readOncePerInvocation({ events }).events, counters }, 'email.sent', () => [
      event,
    ]);
    expect(webhooks.reads.count).toBe(2);
    expect(queue.deliveries).toEqual([deliveryFor(webhook.id, event)]);
    expect(counted).toEqual([]);
    expect(await keptItems()).toEqual([]);
  });

  it('a read throttled every time keeps the event, and the next requeue run publishes it, then takes it out', async () => {
    const queue = new RecordingDeliveryQueue();
    const webhooks = endpoints(100);
    const event = sent();
    const events = new WebhookPublisher({ webhooks, queue, unpublished });
    await publishQuietly({ events: readOncePerInvocation({ events }).events, counters }, 'email.sent', () => [
      event,
    ]);
    expect(webhooks.reads.count).toBe(ENDPOINT_READS);
    expect(queue.deliveries).toEqual([]);
    // Kept, not lost: counted as kept, not as failed.
    expect(counted).toEqual(['WebhookEventsKept']);
    const items = await keptItems();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ sk: `${event.created_at}#${event.key}` });
    // The run a minute later: the endpoints read, the message on the queue, the event taken out.
    await requeueRun(queue);
    expect(queue.deliveries).toEqual([deliveryFor(webhook.id, event)]);
    expect(counted).toContain('WebhookEventsRepublished');
    expect(await keptItems()).toEqual([]);
    // Nothing twice.
    await requeueRun(queue);
    expect(queue.deliveries).toHaveLength(1);
  });

  it('messages the queue refuses are kept too, and stay kept while it still refuses them', async () => {
    const queue = new RecordingDeliveryQueue();
    queue.refuse = true;
    const events = new WebhookPublisher({ webhooks: endpoints(0), queue, unpublished });
    const raised = [sent(), sent()];
    await publishQuietly({ events, counters }, 'email.sent', () => raised);
    expect(counted).toEqual(['WebhookEventsKept']);
    expect(await keptItems()).toHaveLength(2);
    await expect(requeueRun(queue)).rejects.toThrow(/queue down/);
    expect(await keptItems()).toHaveLength(2);
    queue.refuse = false;
    await requeueRun(queue);
    expect(queue.deliveries.map((d) => d.message_id).sort()).toEqual(
      raised.map((e) => deliveryFor(webhook.id, e).message_id).sort(),
    );
    expect(await keptItems()).toEqual([]);
  });

  it('kept with PutItem (the domain routes, whose roles have no UpdateItem), read back the same', async () => {
    const byPut = new DynamoUnpublishedEventStore(table.db, table.tableName, 'PutItem');
    const event = sent();
    await byPut.keep([event]);
    await byPut.keep([event]);
    const read: (WebhookEvent | null)[] = [];
    for (const partition of byPut.keptByPartition(100))
      for await (const page of partition) read.push(...page.map((k) => k.event));
    expect(read).toEqual([event]);
    const queue = new RecordingDeliveryQueue();
    await requeueRun(queue);
    expect(queue.deliveries).toEqual([deliveryFor(webhook.id, event)]);
  });

  it('with nowhere to keep them, or when keeping fails too, the loss is counted (WebhookPublishFailed)', async () => {
    const queue = new RecordingDeliveryQueue();
    const nowhere = new WebhookPublisher({ webhooks: endpoints(100), queue });
    await publishQuietly({ events: nowhere, counters }, 'email.sent', () => [sent()]);
    const failing = new WebhookPublisher({
      webhooks: endpoints(100),
      queue,
      unpublished: { keep: async () => Promise.reject(throttling()) },
    });
    await publishQuietly({ events: failing, counters }, 'email.sent', () => [sent()]);
    expect(counted).toEqual(['WebhookPublishFailed', 'WebhookPublishFailed']);
  });
});
