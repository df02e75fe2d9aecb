/**
 * An endpoint down for an hour, through the whole local service, with time made fast: the clock
 * every part of the service reads (the functions' `systemClock`, and the local SQS's visibility
 * and delays) is moved forward by the test, while timers run in real time. Its retries wait as
 * delayed messages (5 s, 5 min), then parked in the table (30 min and more) or held there by its
 * circuit breaker, never in flight on the queue, while another endpoint gets every event at once;
 * once it is back, a probe closes its breaker, the scheduler puts them back on the queue and they
 * arrive, under the same ids.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoWebhookHoldStore } from '../../functions/adapters/dynamodb/webhook-held-store.js';
import { DynamoWebhookRetryStore } from '../../functions/adapters/dynamodb/webhook-retry-store.js';
import type { HeldMessage, ParkedRetry } from '../../functions/webhooks/ports.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient } from '../support/https.js';
import { startReceiver } from '../support/webhook-receiver.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let up: Awaited<ReturnType<typeof startReceiver>>;
let down: Awaited<ReturnType<typeof startReceiver>>;
let downHook: string;
let sqs: SQSClient;
let db: ReturnType<typeof createDocumentClient>;
let parkedStore: DynamoWebhookRetryStore;
let heldStore: DynamoWebhookHoldStore;

/** Waits (real time) until `probe` gives what `done` wants; fails naming `what` after `timeoutMs`. */
async function until<T>(
  what: string,
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
) {
  const deadline = performance.now() + timeoutMs;
  let value = await probe();
  while (!done(value)) {
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  return value;
}

/** Moves every clock of the service forward (only once it is quiet, so no invocation straddles the jump). */
async function fastForward(ms: number) {
  await service.idle();
  vi.setSystemTime(Date.now() + ms);
}

beforeAll(async () => {
  // Only Date is faked, and it keeps moving with real time: timers, the pollers' long polls and
  // performance.now() stay real.
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 300,
    domainCheckIntervalMs: 100,
    sweepIntervalMs: 250,
    rateLimitPerSecond: 1000,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  sqs = new SQSClient({ endpoint: service.endpoints.sqs, region: 'us-east-1', credentials });
  db = createDocumentClient(
    new DynamoDBClient({ endpoint: service.endpoints.dynamodb, region: 'us-east-1', credentials }),
  );
  parkedStore = new DynamoWebhookRetryStore(db, service.tableName);
  heldStore = new DynamoWebhookHoldStore(db, service.tableName);
  up = await startReceiver();
  down = await startReceiver();
  const events = ['email.sent', 'email.delivered'];
  expect((await api.call('POST', '/webhooks', { body: { endpoint: up.url, events } })).status).toBe(201);
  const created = await api.call('POST', '/webhooks', { body: { endpoint: down.url, events } });
  expect(created.status).toBe(201);
  downHook = created.json.id;
  expect((await api.call('POST', '/domains', { body: { domain: 'acme.test' } })).status).toBe(201);
  await until(
    'the domain to verify',
    () => api.call('GET', '/domains'),
    (r) => r.json?.data?.[0]?.status === 'verified',
  );
}, 30_000);

afterAll(async () => {
  await api?.close();
  await service?.stop();
  sqs?.destroy();
  db?.destroy();
  await up?.close();
  await down?.close();
  vi.useRealTimers();
});

/** Sends one email; resolves with its id and when it was sent (performance.now()). */
const send = async () => {
  const sentAt = performance.now();
  const sent = await api.call('POST', '/emails', {
    body: { from: 'hello@acme.test', to: 'success@simulator.amazonses.com', subject: 'Hooks', text: 'x' },
  });
  expect(sent.status).toBe(200);
  return { id: sent.json.id as string, sentAt };
};

/** Requests a receiver got for one email, by webhook-id (its message to that endpoint). */
const attemptsFor = (receiver: typeof up, emailId: string) => {
  const byMessage = new Map<string, number[]>();
  for (const r of receiver.received)
    if (JSON.parse(r.body).data.email_id === emailId) {
      const id = String(r.headers['webhook-id']);
      byMessage.set(id, [...(byMessage.get(id) ?? []), r.status]);
    }
  return byMessage;
};

/** The other endpoint gets both events of the email within 5 s of the send (real time). */
const promptlyDelivered = async (email: { id: string; sentAt: number }) => {
  const types = () =>
    up
      .accepted()
      .filter((e) => e.data.email_id === email.id)
      .map((e) => e.type)
      .sort()
      .join();
  await until(
    `the up endpoint to get ${email.id}'s events`,
    types,
    (t) => t === 'email.delivered,email.sent',
    5_000,
  );
  const arrived = up.received.filter((r) => JSON.parse(r.body).data.email_id === email.id);
  for (const r of arrived) expect(r.at - email.sentAt).toBeLessThan(5_000);
};

const parked = async () => {
  const found: ParkedRetry[] = [];
  for await (const page of parkedStore.due('9999-12-31T00:00:00.000Z', 1000)) found.push(...page);
  return found;
};

const held = async () => {
  const found: HeldMessage[] = [];
  for (const partition of heldStore.oldest(downHook, 1000))
    for await (const page of partition) found.push(...page);
  return found;
};

/** Messages on the webhook queue, visible or in flight. */
const onQueue = async () => {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: service.queues.webhooks,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
};

const MINUTE = 60_000;

describe('an endpoint down for an hour', () => {
  it('delays nobody else; its retries wait in the table, and arrive once it is back', async () => {
    const start = Date.now();
    down.setDown(503);

    // t = 0: the first email. The up endpoint has its events at once; the down one fails attempt 1,
    // and attempt 2 (5 s later: a new message sent with that delay).
    const first = await send();
    await promptlyDelivered(first);
    await until(
      'two failed attempts at each of the first email’s messages',
      () => [...attemptsFor(down, first.id).values()],
      (lists) => lists.length === 2 && lists.every((l) => l.length === 2),
      15_000,
    );

    // t = 5 min: attempt 3. Its retry is 30 minutes away, longer than a message may be delayed:
    // parked in the table. The failures in a row (5 by now) open the endpoint's breaker, which
    // holds in the table what it has not attempted. Nothing stays on the queue.
    await fastForward(5 * MINUTE + 5_000);
    await until(
      'the first email’s messages parked or held, and nothing on the queue',
      async () => ({ parked: (await parked()).length, held: (await held()).length, queue: await onQueue() }),
      (s) => s.parked + s.held === 2 && s.queue.visible + s.queue.inFlight === 0,
    );
    for (const r of await parked()) {
      expect(r.delivery?.attempts_made).toBe(3);
      expect(Date.parse(r.due_at) - Date.now()).toBeGreaterThan(29 * MINUTE);
      const shown = (await api.call('GET', `/webhooks/${downHook}/events/${r.message_id}`)).json;
      expect(shown).toMatchObject({ status: 'attempting', attempts: 3, next_attempt_at: r.due_at });
    }
    const paused = (await api.call('GET', `/webhooks/${downHook}`)).json;
    expect(paused).toMatchObject({ status: 'enabled' });
    expect(paused.paused_until).not.toBeNull();
    expect(paused.failing_since).not.toBeNull();

    // A second email reaches the up endpoint as promptly as ever; the down one's messages wait too.
    const second = await send();
    await promptlyDelivered(second);
    await until(
      'both emails’ messages to the down endpoint in the table, nothing on the queue',
      async () => ({ parked: (await parked()).length, held: (await held()).length, queue: await onQueue() }),
      (s) => s.parked + s.held === 4 && s.queue.visible + s.queue.inFlight === 0,
      40_000,
    );

    // t = 65 min: the endpoint is back (the clock moved while nothing is in flight: a jump past a
    // message's visibility would hand it out again). A probe succeeds, the breaker closes, and
    // every message waiting arrives under the id it failed under.
    down.setDown();
    await fastForward(60 * MINUTE);
    expect(Date.now() - start).toBeGreaterThanOrEqual(60 * MINUTE);
    await until(
      'every message delivered, and nothing left parked, held or queued',
      async () => ({
        attempts: [...attemptsFor(down, first.id).values(), ...attemptsFor(down, second.id).values()],
        parked: (await parked()).length,
        held: (await held()).length,
        queue: await onQueue(),
      }),
      (s) =>
        s.attempts.length === 4 &&
        s.attempts.every((l) => l.at(-1) === 200) &&
        s.parked + s.held === 0 &&
        s.queue.visible + s.queue.inFlight === 0,
      40_000,
    );
    for (const statuses of attemptsFor(down, first.id).values()) {
      expect(statuses.slice(0, 2)).toEqual([503, 503]);
      expect(statuses.filter((s) => s === 200)).toEqual([200]);
    }
    for (const id of [...attemptsFor(down, first.id).keys(), ...attemptsFor(down, second.id).keys()])
      expect((await api.call('GET', `/webhooks/${downHook}/events/${id}`)).json).toMatchObject({
        status: 'success',
        next_attempt_at: null,
      });
    const resumed = (await api.call('GET', `/webhooks/${downHook}`)).json;
    expect(resumed).toMatchObject({ status: 'enabled', paused_until: null, failing_since: null });
    // The up endpoint got each event once.
    expect(up.received.every((r) => r.status === 200)).toBe(true);
    expect(up.received).toHaveLength(4);
  }, 120_000);
});
