/**
 * Webhook endpoints isolated from each other, measured through the local service as a user with
 * one bad receiver would see it: a healthy endpoint's time alone, then its time beside an endpoint
 * that never answers and one that answers 500 at once, all three subscribed to email.sent and
 * email.delivered. Beside them the healthy endpoint gets every event within max(30 s, twice its
 * time alone). The local SQS runs with an in-flight limit of 50 (LOCAL_SQS_MAX_IN_FLIGHT), which
 * the delivery function's five invocations of ten already reach: a retry kept in flight by the
 * bad endpoints would stall every delivery, and none is.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Emails a phase sends: two events each to every endpoint. 30 in `npm test`; the full
 * measurement (100 emails, 200 events) is `WEBHOOK_ISOLATION_EMAILS=100 npx vitest run
 * test/e2e/webhook-isolation.test.ts`.
 */
const EMAILS = Number(process.env.WEBHOOK_ISOLATION_EMAILS ?? 30);
const EVENTS = ['email.sent', 'email.delivered'];

let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let sqs: SQSClient;
let healthy: Awaited<ReturnType<typeof startReceiver>>;
let failing: Awaited<ReturnType<typeof startReceiver>>;
const hanging = { requests: 0, url: '', server: createServer() };
const previousLimit = process.env.LOCAL_SQS_MAX_IN_FLIGHT;

beforeAll(async () => {
  // Read by the emulators' thread as it starts.
  process.env.LOCAL_SQS_MAX_IN_FLIGHT = '50';
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 300,
    domainCheckIntervalMs: 100,
    rateLimitPerSecond: 1000,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  sqs = new SQSClient({
    endpoint: service.endpoints.sqs,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  healthy = await startReceiver();
  failing = await startReceiver();
  failing.setDown(500);
  // Takes every request and never answers.
  hanging.server.on('request', (_req: IncomingMessage, _res: ServerResponse) => {
    hanging.requests++;
  });
  await new Promise<void>((resolve) => hanging.server.listen(0, '127.0.0.1', resolve));
  hanging.url = `http://127.0.0.1:${(hanging.server.address() as AddressInfo).port}/hooks`;
  expect(
    (await api.call('POST', '/webhooks', { body: { endpoint: healthy.url, events: EVENTS } })).status,
  ).toBe(201);
  expect((await api.call('POST', '/domains', { body: { domain: 'acme.test' } })).status).toBe(201);
  expect(
    (
      await waitFor(
        () => api.call('GET', '/domains'),
        (r) => r.json?.data?.[0]?.status === 'verified',
      )
    ).json.data[0].status,
  ).toBe('verified');
}, 30_000);

afterAll(async () => {
  await api?.close();
  await service?.stop();
  sqs?.destroy();
  await healthy?.close();
  await failing?.close();
  hanging.server.closeAllConnections();
  await new Promise<void>((resolve) => hanging.server.close(() => resolve()));
  if (previousLimit === undefined) delete process.env.LOCAL_SQS_MAX_IN_FLIGHT;
  else process.env.LOCAL_SQS_MAX_IN_FLIGHT = previousLimit;
});

/** Sends EMAILS emails, ten at a time; resolves when they are all accepted. */
async function sendEmails() {
  for (let i = 0; i < EMAILS; i += 10)
    await Promise.all(
      Array.from({ length: Math.min(10, EMAILS - i) }, async () => {
        const sent = await api.call('POST', '/emails', {
          body: {
            from: 'hello@acme.test',
            to: 'success@simulator.amazonses.com',
            subject: 'Hooks',
            text: 'x',
          },
        });
        expect(sent.status).toBe(200);
      }),
    );
}

/** Waits until the healthy endpoint accepted `count` events; fails loudly after `timeoutMs`. */
async function healthyHas(count: number, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (healthy.accepted().length < count) {
    if (performance.now() > deadline)
      throw new Error(
        `the healthy endpoint had ${healthy.accepted().length} of ${count} events after ${timeoutMs} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const inFlight = async () => {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: service.queues.webhooks,
      AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(Attributes?.ApproximateNumberOfMessagesNotVisible);
};

describe('webhook endpoints isolated from each other', () => {
  it('a hanging and a failing endpoint do not delay a healthy one; nothing of theirs stays in flight', async () => {
    // Alone.
    let started = performance.now();
    await sendEmails();
    await healthyHas(2 * EMAILS, 60_000);
    const alone = performance.now() - started;

    // Beside a hanging and a failing endpoint.
    for (const endpoint of [hanging.url, failing.url])
      expect((await api.call('POST', '/webhooks', { body: { endpoint, events: EVENTS } })).status).toBe(201);
    const allowed = Math.max(30_000, 2 * alone);
    started = performance.now();
    await sendEmails();
    await healthyHas(4 * EMAILS, allowed);
    const beside = performance.now() - started;
    console.info(
      `healthy endpoint: ${2 * EMAILS} events alone in ${Math.round(alone)} ms, beside a hanging and a failing endpoint in ${Math.round(beside)} ms (allowed ${Math.round(allowed)} ms)`,
    );
    // The bad endpoints were tried, and their breakers opened: far fewer attempts than messages.
    expect(hanging.requests).toBeGreaterThan(0);
    expect(failing.received.length).toBeGreaterThan(0);
    expect(failing.received.length).toBeLessThan(2 * EMAILS);
    const listed = (await api.call('GET', '/webhooks')).json.data as {
      endpoint: string;
      paused_until: string | null;
    }[];
    for (const endpoint of [hanging.url, failing.url])
      expect(listed.find((w) => w.endpoint === endpoint)?.paused_until).not.toBeNull();

    // Their messages wait delayed, parked or held, never in flight: the queue empties of them.
    expect(await waitFor(inFlight, (n) => n === 0, 15_000)).toBe(0);
  }, 120_000);
});
