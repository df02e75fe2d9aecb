/**
 * The circuit breaker of a webhook endpoint, through the delivery function's batch and the requeue
 * function's tending of held messages, against a real (emulated) table: it opens after failures
 * in a row, holds the endpoint's messages (nothing attempted, nothing left on the queue), probes
 * once its pause ends (one probe, claimed), pauses longer after a failed probe, closes on a
 * successful one and puts the held messages back oldest first; beside the 3-day auto-disable, and
 * the retry window.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoWebhookBreakerRepository } from '../../functions/adapters/dynamodb/webhook-breaker-repository.js';
import { DynamoWebhookHoldStore } from '../../functions/adapters/dynamodb/webhook-held-store.js';
import { DynamoWebhookRetryStore } from '../../functions/adapters/dynamodb/webhook-retry-store.js';
import { emailEvent } from '../../functions/emails/events.js';
import {
  BREAKER_THRESHOLD,
  ENDPOINT_SHARE,
  FIRST_PAUSE_MS,
  NO_ANSWER_WEIGHT,
} from '../../functions/webhooks/breaker.js';
import {
  type DeliverBatchDeps,
  deliverBatch,
  type QueuedMessage,
} from '../../functions/webhooks/deliver-batch.js';
import { tendHeldMessages } from '../../functions/webhooks/held.js';
import {
  type Delivery,
  deliveryFor,
  FAILING_DISABLES_AFTER_MS,
  newSigningSecret,
  newWebhookId,
  RETRY_WINDOW_MS,
  toWebhookBody,
  type Webhook,
} from '../../functions/webhooks/model.js';
import type { HeldMessage, PostResult } from '../../functions/webhooks/ports.js';
import { updateWebhook } from '../../functions/webhooks/webhooks.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let webhooks: DynamoWebhookBreakerRepository;
let held: DynamoWebhookHoldStore;
beforeAll(async () => {
  table = await startTestTable();
  webhooks = new DynamoWebhookBreakerRepository(table.db, table.tableName, { shards: 2 });
  // One partition: the order they come back in is exactly oldest first.
  held = new DynamoWebhookHoldStore(table.db, table.tableName, 1);
});
afterAll(async () => {
  await table?.stop();
});

const start = Date.parse('2026-11-24T10:00:00.000Z');
let now = start;
const clock = { now: () => new Date(now) };

/** The receiver: answers `status` (0: no answer), counting the attempts under way at once. */
const sender = {
  status: 500,
  calls: [] as string[],
  running: 0,
  mostAtOnce: 0,
  async post(_url: string, _headers: Record<string, string>, body: string): Promise<PostResult> {
    this.calls.push(body);
    this.running++;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.running--;
    return { status: this.status, durationMs: 5, response: this.status ? 'answer' : 'timed out' };
  },
};

/** The delivery queue: what was sent to it, with the delay asked for. */
const queue = {
  sent: [] as { delivery: Delivery; delaySeconds?: number }[],
  async enqueue(deliveries: Delivery[], delaySeconds?: number) {
    for (const delivery of deliveries) this.sent.push({ delivery, delaySeconds });
  },
};

const retries = new DynamoWebhookRetryStore({} as never, 'unused');
const deps = (): DeliverBatchDeps => ({ webhooks, held, sender, clock, queue, retries });
const tendDeps = () => ({ webhooks, held, queue, clock });

let hook: Webhook;
let serial = 0;
const message = (minutesAgo = 0) => {
  serial++;
  const delivery = deliveryFor(
    hook.id,
    emailEvent(
      'email.delivered',
      new Date(now - minutesAgo * 60_000 + serial).toISOString(),
      { email_id: `em_${serial}`, from: 'a@b.test', subject: 's', tags: {} },
      ['x@y.test'],
    ),
  );
  return { id: `sqs-${serial}`, body: JSON.stringify(delivery), receiveCount: 1, delivery };
};
const batch = (messages: QueuedMessage[]) => deliverBatch(deps(), messages);
const heldNow = async () => {
  const found: HeldMessage[] = [];
  for (const partition of held.oldest(hook.id, 1000)) for await (const page of partition) found.push(...page);
  return found;
};
const endpoint = async () => (await webhooks.get(hook.id)) as Webhook;

beforeEach(async () => {
  // The last test's endpoint goes: the requeue function lists only this one's.
  if (hook) await webhooks.delete(hook.id);
  now = start;
  sender.status = 500;
  sender.calls = [];
  sender.mostAtOnce = 0;
  queue.sent = [];
  serial += 1000;
  hook = {
    id: newWebhookId(),
    endpoint: 'https://hooks.example.com/in',
    events: ['email.delivered'],
    status: 'enabled',
    created_at: new Date(start).toISOString(),
    signing_secret: newSigningSecret(),
  };
  await webhooks.create(hook);
});

describe("an endpoint's circuit breaker", () => {
  it('opens after failures in a row: the rest of its messages are held, not attempted, their queue messages done', async () => {
    const messages = Array.from({ length: 10 }, () => message());
    expect(await batch(messages)).toEqual([]);
    // At most ENDPOINT_SHARE at once; the breaker opened at the threshold, the lanes then under way finishing.
    expect(sender.mostAtOnce).toBe(ENDPOINT_SHARE);
    const attempted = sender.calls.length;
    expect(attempted).toBeGreaterThanOrEqual(BREAKER_THRESHOLD);
    expect(attempted).toBeLessThan(BREAKER_THRESHOLD + ENDPOINT_SHARE);
    // Each attempted one's retry is a new message delayed 5 s; the others are held.
    expect(queue.sent).toHaveLength(attempted);
    expect(queue.sent.every((s) => s.delaySeconds === 5)).toBe(true);
    expect(await heldNow()).toHaveLength(10 - attempted);
    const paused = await endpoint();
    expect(paused).toMatchObject({ paused_until: new Date(start + FIRST_PAUSE_MS).toISOString(), trips: 1 });
    expect(paused.held_at).toBeDefined();
    // The API shows it in fields of our own; status keeps Resend's two values.
    expect(toWebhookBody(paused)).toMatchObject({
      status: 'enabled',
      paused_until: paused.paused_until,
      failing_since: new Date(start).toISOString(),
    });

    // While open: a new message is held at once, and the requeue function sends nothing back.
    sender.calls = [];
    expect(await batch([message()])).toEqual([]);
    expect(sender.calls).toEqual([]);
    queue.sent = [];
    expect(await tendHeldMessages(tendDeps())).toEqual({ released: 0, failed: 0 });
    expect(queue.sent).toEqual([]);
  });

  it('counts an attempt without an answer heavier: a hanging endpoint opens after three', async () => {
    sender.status = 0;
    expect(NO_ANSWER_WEIGHT * 3).toBeGreaterThanOrEqual(BREAKER_THRESHOLD);
    for (let i = 0; i < 3; i++) await batch([message()]);
    expect((await endpoint()).paused_until).toBe(new Date(start + FIRST_PAUSE_MS).toISOString());
  });

  it('probes once its pause ends, pauses longer after a failed probe, and resumes after a good one, oldest held first', async () => {
    await batch(Array.from({ length: 8 }, () => message()));
    // Held while open, older events among them.
    await batch([message(30), message(10)]);
    const heldBefore = await heldNow();
    expect(heldBefore.map((h) => h.created_at)).toEqual(heldBefore.map((h) => h.created_at).sort());

    // The pause ended with no new event: the requeue function sends the oldest held one, the probe.
    now = start + FIRST_PAUSE_MS;
    queue.sent = [];
    expect(await tendHeldMessages(tendDeps())).toEqual({ released: 1, failed: 0 });
    expect(queue.sent.map((s) => s.delivery.message_id)).toEqual([heldBefore[0]?.message_id]);
    const probe = { id: 'probe', body: JSON.stringify(queue.sent[0]?.delivery), receiveCount: 1 };

    // It comes back with another message: one probe is claimed, the other held; it fails.
    sender.calls = [];
    const other = message();
    expect(await batch([probe, other])).toEqual([]);
    expect(sender.calls).toHaveLength(1);
    // Paused again, twice as long.
    expect(await endpoint()).toMatchObject({
      paused_until: new Date(now + 2 * FIRST_PAUSE_MS).toISOString(),
      trips: 2,
    });

    // The next probe succeeds: the breaker closes, the failing mark goes.
    now += 2 * FIRST_PAUSE_MS;
    sender.status = 200;
    sender.calls = [];
    const good = message();
    expect(await batch([good])).toEqual([]);
    expect(sender.calls).toEqual([good.delivery.body]);
    const closed = await endpoint();
    expect(closed.paused_until).toBeUndefined();
    expect(closed.failing_since).toBeUndefined();
    expect(toWebhookBody(closed)).toMatchObject({ paused_until: null, failing_since: null });

    // The requeue function puts every held one back, oldest first, and clears the mark.
    const stillHeld = await heldNow();
    queue.sent = [];
    expect(await tendHeldMessages(tendDeps())).toEqual({ released: stillHeld.length, failed: 0 });
    expect(queue.sent.map((s) => s.delivery.message_id)).toEqual(stillHeld.map((h) => h.message_id));
    expect(queue.sent.every((s) => s.delaySeconds === undefined)).toBe(true);
    expect(await heldNow()).toEqual([]);
    expect((await endpoint()).held_at).toBeUndefined();
    // Delivered now, with the attempts they had made.
    sender.calls = [];
    const back = queue.sent.map((s, i) => ({
      id: `back-${i}`,
      body: JSON.stringify(s.delivery),
      receiveCount: 1,
    }));
    expect(await batch(back)).toEqual([]);
    expect(sender.calls).toHaveLength(back.length);
  });

  it('keeps the 3-day clock running through its pauses: a probe failing past it disables the endpoint, and its held messages fail', async () => {
    await batch(Array.from({ length: 12 }, () => message()));
    const heldCount = (await heldNow()).length;
    expect(heldCount).toBeGreaterThan(0);
    // Three days of failed probes later.
    now = start + FAILING_DISABLES_AFTER_MS;
    expect(await batch([message()])).toEqual([]);
    const disabled = await endpoint();
    expect(disabled.status).toBe('disabled');
    expect(disabled.disabled_reason).toMatch(/no 2xx for 3 days/);
    expect(await tendHeldMessages(tendDeps())).toEqual({ released: 0, failed: heldCount });
    expect(await heldNow()).toEqual([]);
    expect((await endpoint()).held_at).toBeUndefined();
    const [first] = (await webhooks.listMessages(hook.id, { limit: 100, offset: 0 })).data.filter(
      (m) => m.attempts === 0,
    );
    expect(first).toMatchObject({ status: 'failed', next_attempt_at: null });
    // Enabled again, it starts afresh: no failing mark, its breaker closed.
    await updateWebhook({ webhooks, clock, guard: { check: async () => undefined } }, hook.id, {
      status: 'enabled',
    });
    const enabled = await endpoint();
    expect(enabled.status).toBe('enabled');
    for (const field of ['failing_since', 'failures', 'paused_until', 'trips', 'probe_at'] as const)
      expect(enabled[field]).toBeUndefined();
  });

  it('marks a message held past the retry window failed, even while paused', async () => {
    await batch(Array.from({ length: 6 }, () => message()));
    const oldOne = message(RETRY_WINDOW_MS / 60_000 + 1);
    expect(await batch([oldOne])).toEqual([]);
    expect(await tendHeldMessages(tendDeps())).toEqual({ released: 0, failed: 1 });
    expect((await heldNow()).map((h) => h.message_id)).not.toContain(oldOne.delivery.message_id);
    expect(await webhooks.getMessage(hook.id, oldOne.delivery.message_id)).toMatchObject({
      status: 'failed',
    });
  });
  it('keeps a message held again while its release was under way: taking the first hold out leaves the second', async () => {
    const { delivery } = message();
    await held.hold([delivery]);
    const [first] = await heldNow();
    // Released (put back on the queue), received, and held again before the release took it out.
    await held.hold([delivery]);
    await held.remove([first as HeldMessage]);
    const left = await heldNow();
    expect(left.map((h) => h.message_id)).toEqual([delivery.message_id]);
    expect(left[0]?.hold_id).not.toBe(first?.hold_id);
  });
  it('keeps what delivery wrote when an endpoint is changed, and starts its breaker afresh on a new URL', async () => {
    const before = await endpoint();
    await batch(Array.from({ length: 10 }, () => message()));
    const paused = await endpoint();
    expect(paused.paused_until).toBeDefined();
    expect(paused.held_at).toBeDefined();
    // A PATCH that read the endpoint before the breaker opened, written after: the pause and the held mark stay.
    expect(await webhooks.save({ ...before, events: ['email.delivered', 'email.sent'] })).toBe(true);
    const changed = await endpoint();
    expect(changed.events).toEqual(['email.delivered', 'email.sent']);
    for (const field of ['paused_until', 'held_at', 'failures', 'failing_since', 'trips'] as const)
      expect(changed[field]).toEqual(paused[field]);
    // A new URL: a fresh breaker and failing mark; the held mark stays, so the held messages go back.
    await updateWebhook({ webhooks, clock, guard: { check: async () => undefined } }, hook.id, {
      endpoint: 'https://hooks.example.com/new',
    });
    const moved = await endpoint();
    for (const field of ['failing_since', 'failures', 'paused_until', 'trips', 'probe_at'] as const)
      expect(moved[field]).toBeUndefined();
    expect(moved.held_at).toEqual(paused.held_at);
    const heldCount = (await heldNow()).length;
    expect(await tendHeldMessages(tendDeps())).toEqual({ released: heldCount, failed: 0 });
  });
});
