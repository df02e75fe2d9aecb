import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { emailEvent } from '../../functions/emails/events.js';
import { makeHandler } from '../../functions/handlers/deliver-webhooks.js';
import {
  attemptNumber,
  type Delivery,
  deliveryFor,
  MAX_ATTEMPTS,
  MAX_QUEUE_WAIT_SECONDS,
  newSigningSecret,
  parseDelivery,
  RETRY_DELAYS_SECONDS,
  retryDelaySeconds,
  retryWaitsIn,
  type Webhook,
  type WebhookMessage,
} from '../../functions/webhooks/model.js';
import type {
  DeliveryQueue,
  ParkedRetry,
  PostResult,
  WebhookRetryStore,
} from '../../functions/webhooks/ports.js';
import {
  MAX_REQUEUED_PER_RUN,
  REQUEUE_MARGIN_MS,
  requeueDueRetries,
} from '../../functions/webhooks/retries.js';

/** Parked retries in memory, as the table keeps them: by due time, then message id. */
class MemoryRetryStore implements WebhookRetryStore {
  readonly items = new Map<string, ParkedRetry>();
  failPark = false;
  private key = (r: Pick<ParkedRetry, 'due_at' | 'message_id'>) => `${r.due_at}#${r.message_id}`;
  async park(retry: ParkedRetry & { delivery: Delivery }) {
    if (this.failPark) throw new Error('throttled');
    this.items.set(this.key(retry), retry);
  }
  async *due(until: string, limit: number) {
    const due = [...this.items.values()]
      .filter((r) => r.due_at <= until)
      .sort((a, b) => this.key(a).localeCompare(this.key(b)))
      .slice(0, limit);
    for (let i = 0; i < due.length; i += 3) yield due.slice(i, i + 3);
  }
  /** One partition here (the table's side-by-side reading is tested against dynalite). */
  dueByPartition(until: string, limit: number) {
    return [this.due(until, limit)];
  }
  async remove(retries: readonly Pick<ParkedRetry, 'due_at' | 'message_id'>[]) {
    for (const retry of retries) this.items.delete(this.key(retry));
  }
}

class MemoryDeliveryQueue implements DeliveryQueue {
  readonly sent: Delivery[][] = [];
  /** The delay each call asked for. */
  readonly delays: (number | undefined)[] = [];
  refuse?: (batch: Delivery[]) => boolean;
  async enqueue(deliveries: Delivery[], delaySeconds?: number) {
    if (this.refuse?.(deliveries)) throw new Error('SQS refused');
    this.sent.push(deliveries);
    this.delays.push(delaySeconds);
  }
}

const webhook: Webhook = {
  id: 'wh_down',
  endpoint: 'https://down.example.com/in',
  events: ['email.sent'],
  status: 'enabled',
  created_at: '2026-11-20T00:00:00.000Z',
  signing_secret: newSigningSecret(),
};
const delivery = (n = 0): Delivery =>
  deliveryFor(
    webhook.id,
    emailEvent(
      'email.sent',
      `2026-11-24T10:00:0${n}.000Z`,
      { email_id: `em_${n}`, from: 'a@b.test', subject: 's', tags: {} },
      ['x@y.test'],
    ),
  );

describe('where a webhook retry waits', () => {
  it('on the queue up to 15 minutes (5 s, 5 min), parked in the table beyond (30 min to 10 h)', () => {
    expect(MAX_QUEUE_WAIT_SECONDS).toBe(900);
    expect(RETRY_DELAYS_SECONDS.map(retryWaitsIn)).toEqual([
      'queue',
      'queue',
      'table',
      'table',
      'table',
      'table',
      'table',
    ]);
    expect(retryWaitsIn(900)).toBe('queue');
    expect(retryWaitsIn(901)).toBe('table');
  });

  it("counts attempts across parking: the attempts made before, then the new message's receive count", () => {
    expect(attemptNumber({}, 1)).toBe(1);
    expect(attemptNumber({}, 3)).toBe(3);
    expect(attemptNumber({ attempts_made: 3 }, 1)).toBe(4);
    expect(attemptNumber({ attempts_made: 3 }, 2)).toBe(5);
    // A parked message still round-trips through the queue; nonsense counts are refused.
    const parked = { ...delivery(), attempts_made: 3 };
    expect(parseDelivery(JSON.stringify(parked))).toEqual(parked);
    expect(parseDelivery(JSON.stringify({ ...parked, attempts_made: 0 }))).toBeUndefined();
    expect(parseDelivery(JSON.stringify({ ...parked, attempts_made: 1.5 }))).toBeUndefined();
  });
});

describe('the delivery function with a failing endpoint', () => {
  const now = Date.parse('2026-11-24T10:00:00Z');
  const setup = () => {
    const messages = new Map<string, WebhookMessage>();
    const retries = new MemoryRetryStore();
    const queue = new MemoryDeliveryQueue();
    const handler = makeHandler({
      webhooks: {
        get: async () => webhook,
        recordAttempt: async (message) => {
          messages.set(message.id, message);
        },
        // One failure only each time: the breaker stays closed here (webhook-breaker.test.ts opens it).
        failing: async (_id, at) => ({ ...webhook, failing_since: at, failures: 1 }),
        recovered: async () => undefined,
        disable: async () => false,
        pause: async () => true,
        claimProbe: async () => true,
        markHeld: async () => true,
      },
      held: { hold: async () => undefined },
      sender: { post: async (): Promise<PostResult> => ({ status: 503, durationMs: 3, response: 'down' }) },
      clock: { now: () => new Date(now) },
      queue,
      retries,
    });
    const record = (body: Delivery, receiveCount: number, id = 'm1'): SQSRecord =>
      ({
        messageId: id,
        receiptHandle: `rh-${id}`,
        body: JSON.stringify(body),
        attributes: { ApproximateReceiveCount: String(receiveCount) },
      }) as unknown as SQSRecord;
    const run = (...records: SQSRecord[]) => handler({ Records: records } as SQSEvent);
    return { messages, queue, retries, record, run };
  };

  it('sends a short retry as a new message delayed by its wait, and lets the received one be deleted', async () => {
    const t = setup();
    for (const [receiveCount, seconds] of [
      [1, 5],
      [2, 300],
    ] as const) {
      const result = await t.run(t.record(delivery(), receiveCount));
      // Nothing kept in flight: the received message is done.
      expect(result.batchItemFailures).toEqual([]);
      expect(t.queue.sent.at(-1)).toEqual([{ ...delivery(), attempts_made: receiveCount }]);
      expect(t.queue.delays.at(-1)).toBe(seconds);
    }
    // The new message's first receive is the next attempt.
    expect(attemptNumber({ attempts_made: 1 }, 1)).toBe(2);
    expect(t.retries.items.size).toBe(0);
  });

  it('parks a long retry in the table, due at its next attempt, and lets its message be deleted', async () => {
    const t = setup();
    const result = await t.run(t.record(delivery(), 3));
    expect(result.batchItemFailures).toEqual([]);
    expect(t.queue.sent).toEqual([]);
    const [parked] = [...t.retries.items.values()];
    const due = new Date(now + 1800_000).toISOString();
    expect(parked).toEqual({
      due_at: due,
      message_id: delivery().message_id,
      delivery: { ...delivery(), attempts_made: 3 },
    });
    expect(t.messages.get(delivery().message_id)).toMatchObject({
      status: 'attempting',
      attempts: 3,
      next_attempt_at: due,
    });
  });

  it("goes on with Resend's schedule when a parked retry comes back as a new message", async () => {
    const t = setup();
    // Back on the queue after 3 attempts: the new message's first receive is attempt 4, 2 h next.
    await t.run(t.record({ ...delivery(), attempts_made: 3 }, 1));
    const [parked] = [...t.retries.items.values()];
    expect(parked?.delivery?.attempts_made).toBe(4);
    expect(parked?.due_at).toBe(new Date(now + (retryDelaySeconds(4) ?? 0) * 1000).toISOString());
    expect(t.messages.get(delivery().message_id)?.attempts).toBe(4);
    // The last attempt fails the message: nothing parked, nothing sent, the message deleted.
    const last = setup();
    const result = await last.run(last.record({ ...delivery(), attempts_made: MAX_ATTEMPTS - 1 }, 1));
    expect(result.batchItemFailures).toEqual([]);
    expect(last.retries.items.size).toBe(0);
    expect(last.queue.sent).toEqual([]);
    expect(last.messages.get(delivery().message_id)).toMatchObject({ status: 'failed', attempts: 8 });
  });

  it('keeps the received message when its retry can be neither parked nor sent: never lost', async () => {
    const t = setup();
    t.retries.failPark = true;
    expect((await t.run(t.record(delivery(), 3))).batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    t.queue.refuse = () => true;
    expect((await t.run(t.record(delivery(), 1))).batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
  });
});

describe('putting parked retries back on the queue', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  const clock = { now: () => new Date(now) };
  const park = async (store: MemoryRetryStore, n: number, dueInMs: number) => {
    const d = { ...delivery(n), attempts_made: 3 };
    await store.park({
      due_at: new Date(now + dueInMs).toISOString(),
      message_id: d.message_id,
      delivery: d,
    });
    return d;
  };

  it('re-queues those due (ten a batch) and takes them out; those not due stay', async () => {
    const retries = new MemoryRetryStore();
    const queue = new MemoryDeliveryQueue();
    const due = [await park(retries, 1, -60_000), await park(retries, 2, 0)];
    await park(retries, 3, 1000);
    expect(await requeueDueRetries({ retries, queue, clock })).toEqual({
      requeued: 2,
      refused: 0,
      unreadable: 0,
    });
    expect(queue.sent.flat()).toEqual(due);
    expect([...retries.items.values()].map((r) => r.delivery?.message_id)).toEqual([delivery(3).message_id]);
    // Again: nothing more is due.
    expect((await requeueDueRetries({ retries, queue, clock })).requeued).toBe(0);
  });

  it('leaves what the queue refused parked for the next run, and fails the run so it is seen', async () => {
    const retries = new MemoryRetryStore();
    const queue = new MemoryDeliveryQueue();
    // Read three a page here (one SendMessageBatch each): the first page is refused.
    const refused = [
      await park(retries, 1, -3000),
      await park(retries, 2, -2000),
      await park(retries, 3, -1000),
    ];
    const taken = [await park(retries, 4, -500), await park(retries, 5, -400)];
    queue.refuse = (batch) => batch.some((d) => d.message_id === refused[0]?.message_id);
    await expect(requeueDueRetries({ retries, queue, clock })).rejects.toThrow(/refused 3 due retries/);
    expect(queue.sent.flat()).toEqual(taken);
    expect([...retries.items.values()].map((r) => r.delivery)).toEqual(refused);
    queue.refuse = undefined;
    expect((await requeueDueRetries({ retries, queue, clock })).requeued).toBe(3);
    expect(retries.items.size).toBe(0);
  });

  it('takes out an unreadable item, and stops at its bound', async () => {
    const retries = new MemoryRetryStore();
    const queue = new MemoryDeliveryQueue();
    const bad = { due_at: new Date(now - 1).toISOString(), message_id: 'msg_bad', delivery: null };
    retries.items.set(`${bad.due_at}#${bad.message_id}`, bad);
    for (let n = 1; n <= 6; n++) await park(retries, n, -1000);
    const report = await requeueDueRetries({ retries, queue, clock }, 4);
    expect(report.requeued + report.unreadable).toBe(4);
    expect(retries.items.size).toBe(3);
    const rest = await requeueDueRetries({ retries, queue, clock }, 4);
    expect(report.unreadable + rest.unreadable).toBe(1);
    expect(report.requeued + rest.requeued).toBe(6);
    expect(retries.items.size).toBe(0);
  });

  it("stops taking pages once the invocation's time left is under the margin; the next run takes the rest", async () => {
    const retries = new MemoryRetryStore();
    const queue = new MemoryDeliveryQueue();
    for (let n = 1; n <= 7; n++) await park(retries, n, -1000);
    // Time enough for the first page (three here), then under the margin.
    let left = REQUEUE_MARGIN_MS + 1;
    const report = await requeueDueRetries({ retries, queue, clock }, MAX_REQUEUED_PER_RUN, () => {
      const now = left;
      left = REQUEUE_MARGIN_MS - 1;
      return now;
    });
    expect(report.requeued).toBe(3);
    expect(retries.items.size).toBe(4);
    // A run that starts with too little time takes nothing.
    expect((await requeueDueRetries({ retries, queue, clock }, 100, () => 0)).requeued).toBe(0);
    expect((await requeueDueRetries({ retries, queue, clock }, 100, () => 60_000)).requeued).toBe(4);
  });
});
