/**
 * An endpoint down for an hour, through the whole local service, with time made fast: the clock
 * every part of the service reads (the functions' `systemClock`, and the local SQS's visibility
 * and delays) is moved forward by the test, while timers run in real time. Its retries of 30
 * minutes and more wait parked in the table, not in flight on the queue, while another endpoint
 * gets every event at once; once it is back, the scheduler puts them back on the queue and they
 * arrive, under the same ids, with Resend's schedule's attempt count.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoWebhookRetryStore } from '../../functions/adapters/dynamodb/webhook-retry-store.js';
import type { ParkedRetry } from '../../functions/webhooks/ports.js';
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
  it('delays nobody else; its retries wait parked in the table, and arrive once it is back', async () => {
    const start = Date.now();
    down.setDown(503);

    // t = 0: the first email. The up endpoint has its events at once; the down one fails attempt 1,
    // and attempt 2 (5 s later: SQS holds that wait).
    const first = await send();
    await promptlyDelivered(first);
    await until(
      'two failed attempts at each of the first email’s messages',
      () => [...attemptsFor(down, first.id).values()],
      (lists) => lists.length === 2 && lists.every((l) => l.length === 2),
      15_000,
    );

    // t = 5 min: attempt 3 fails; its retry is 30 minutes away, longer than SQS may hold it: the
    // retry is parked in the table and its message leaves the queue.
    await fastForward(5 * MINUTE + 5_000);
    await until(
      'the first email’s two retries parked, and nothing on the queue',
      async () => ({ parked: (await parked()).length, queue: await onQueue() }),
      (s) => s.parked === 2 && s.queue.visible + s.queue.inFlight === 0,
    );
    const retries = await parked();
    expect(retries.map((r) => r.delivery?.attempts_made)).toEqual([3, 3]);
    expect(new Set(retries.map((r) => r.message_id))).toEqual(new Set(attemptsFor(down, first.id).keys()));
    for (const r of retries) {
      expect(Date.parse(r.due_at) - Date.now()).toBeGreaterThan(29 * MINUTE);
      const shown = (await api.call('GET', `/webhooks/${downHook}/events/${r.message_id}`)).json;
      expect(shown).toMatchObject({ status: 'attempting', attempts: 3, next_attempt_at: r.due_at });
    }

    // t = 36 min: the retries fell due; the scheduler puts them back on the queue, attempt 4
    // fails, and they are parked again, 2 hours away.
    await fastForward(31 * MINUTE);
    await until(
      'attempt 4 of the first email’s messages, parked again',
      async () => ({ attempts: [...attemptsFor(down, first.id).values()], parked: await parked() }),
      (s) =>
        s.attempts.every((l) => l.length === 4) &&
        s.parked.length === 2 &&
        s.parked.every((r) => r.delivery?.attempts_made === 4),
    );
    // Meanwhile a second email reaches the up endpoint as promptly as ever.
    const second = await send();
    await promptlyDelivered(second);
    await until(
      'the second email’s messages to the down endpoint attempted twice',
      () => [...attemptsFor(down, second.id).values()],
      (lists) => lists.length === 2 && lists.every((l) => l.length === 2),
      15_000,
    );

    // t = 41 min: the second email's attempt 3 fails too (its 5 minutes waited on the queue), and
    // its retries are parked beside the first one's.
    await fastForward(5 * MINUTE + 5_000);
    await until(
      'the second email’s retries parked too',
      async () => (await parked()).map((r) => r.delivery?.attempts_made).sort(),
      (made) => made.join() === '3,3,4,4',
    );

    // t = 61 min: the endpoint is back. Each retry arrives when it is due, under the id it failed
    // under: the second email's at 71 min (attempt 4), the first one's at 156 min (attempt 5).
    await fastForward(20 * MINUTE);
    expect(Date.now() - start).toBeGreaterThanOrEqual(60 * MINUTE);
    down.setDown();
    await fastForward(10 * MINUTE);
    await until(
      'the second email’s messages delivered',
      () => [...attemptsFor(down, second.id).values()],
      (lists) => lists.length === 2 && lists.every((l) => l.at(-1) === 200),
    );
    for (const statuses of attemptsFor(down, second.id).values())
      expect(statuses).toEqual([503, 503, 503, 200]);
    expect([...attemptsFor(down, first.id).values()].map((l) => l.length)).toEqual([4, 4]);
    await fastForward(90 * MINUTE);
    await until(
      'the first email’s messages delivered, and nothing left parked or queued',
      async () => ({
        attempts: [...attemptsFor(down, first.id).values()],
        parked: (await parked()).length,
        queue: await onQueue(),
      }),
      (s) =>
        s.attempts.every((l) => l.at(-1) === 200) &&
        s.parked === 0 &&
        s.queue.visible + s.queue.inFlight === 0,
    );
    for (const statuses of attemptsFor(down, first.id).values())
      expect(statuses).toEqual([503, 503, 503, 503, 200]);
    for (const id of attemptsFor(down, first.id).keys())
      expect((await api.call('GET', `/webhooks/${downHook}/events/${id}`)).json).toMatchObject({
        status: 'success',
        attempts: 5,
        next_attempt_at: null,
      });
    // The up endpoint got each event once.
    expect(up.received.every((r) => r.status === 200)).toBe(true);
    expect(up.received).toHaveLength(4);
  }, 120_000);
});
