/**
 * The email metrics by broadcast (issue 41) through their real paths: a broadcast email's SES
 * events through the events consumer (the broadcast read back from the message tag), the counters
 * and their roll-up over the emulated table, `GET /v1/emails/metrics?dimensions=broadcast&broadcast_id=`
 * with API Gateway v2 events, and the official SDK's own request (its fetch answered by the handler),
 * each answer checked against Resend's `GetEmailsMetricsResponse`.
 */
import { readFileSync } from 'node:fs';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoBroadcastNames } from '../../functions/adapters/dynamodb/broadcast-names.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DAY_PARTITIONS, DynamoMetricsStore } from '../../functions/adapters/dynamodb/metrics-store.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { keys, shardOf } from '../../functions/adapters/dynamodb/table.js';
import { BROADCAST_ID_TAG } from '../../functions/adapters/ses/mailer.js';
import { makeHandler as makeMetrics } from '../../functions/handlers/get-email-metrics.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { emailMetricsResponseSchema } from '../../functions/metrics/answers.js';
import type { MetricsCounter } from '../../functions/metrics/ports.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import { unsubscribeCounter } from '../../functions/wiring/unsubscribe.js';
import { context, httpEvent, parseBody, sqsEvent } from '../support/events.js';
import { emailContent, fullAccessKey, storeDomain } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

const HOUR = 3_600_000;
const FIXTURE = readFileSync(new URL('../fixtures/ses-event-open.json', import.meta.url), 'utf8');

let table: TestTable;
let emails: DynamoEmailRepository;
let repos: ReturnType<typeof createRepositories>;
let metrics: DynamoMetricsStore;
let token: string;
let now = Date.parse('2026-11-22T03:30:00.000Z');
const clock = { now: () => new Date(now) };
const spring = newUuid();
const autumn = newUuid();

/** An SES event of this email (Send, Delivery or Open), tagged with its broadcast as the mailer tags it. */
function sesEvent(kind: 'Send' | 'Delivery' | 'Open', id: string, broadcastId?: string): string {
  const event = JSON.parse(FIXTURE.replaceAll('__EMAIL_ID__', id));
  if (broadcastId) event.mail.tags[BROADCAST_ID_TAG] = [broadcastId];
  event.eventType = kind;
  if (kind !== 'Open') delete event.open;
  if (kind === 'Send') event.send = {};
  if (kind === 'Delivery')
    event.delivery = { timestamp: '2026-11-22T03:20:05.000Z', recipients: ['a@example.com'] };
  return JSON.stringify(event);
}

async function queuedEmail(broadcastId?: string) {
  const id = newEmailId();
  const content = emailContent({ from: 'News <news@acme.test>', to: ['a@example.com'], cc: [], bcc: [] });
  await emails.create({
    id,
    created_at: new Date(now).toISOString(),
    content: broadcastId ? { ...content, broadcast_id: broadcastId } : content,
  });
  return id;
}

/** A broadcast item as the broadcasts' store writes it (only what the metrics read of it: its name). */
const storeBroadcast = (id: string, name: string) =>
  table.db.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: keys.broadcasts, sk: keys.broadcast(id), id, name, status: 'sent' },
    }),
  );

const api = (db: DynamoDBDocumentClient = table.db) =>
  makeMetrics({
    apiKeys: repos.apiKeys,
    domains: repos.domains,
    metrics: new DynamoMetricsStore(db, table.tableName, () => now),
    broadcasts: new DynamoBroadcastNames(table.db, table.tableName),
    clock,
  });
async function get(query: Record<string, string>, db?: DynamoDBDocumentClient) {
  const response = await api(db)(
    httpEvent({ method: 'GET', path: '/v1/emails/metrics', token, query }),
    context(),
  );
  return { status: response.statusCode, body: parseBody(response) };
}

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  repos = createRepositories(table.tableName, table.db);
  metrics = new DynamoMetricsStore(table.db, table.tableName, () => now);
  token = await fullAccessKey(repos.apiKeys);
  // Rolled up to this hour (nothing was counted before it): a read queries one hour's shards, not four.
  await table.db.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: keys.metrics, sk: keys.metricsRolledSk, through: Math.floor(now / HOUR) * HOUR },
    }),
  );
  await storeBroadcast(spring, 'Spring news');
  await storeBroadcast(autumn, 'Autumn news');
  // Two emails of the spring broadcast (both delivered, one opened), one of the autumn one, and a
  // transactional email, all from acme.test: each SES event twice (SES delivers at least once).
  const consumer = makeEventsConsumer({ emails, metrics });
  const bodies: string[] = [];
  for (const [broadcastId, opened] of [
    [spring, true],
    [spring, false],
    [autumn, false],
    [undefined, true],
  ] as const) {
    const id = await queuedEmail(broadcastId);
    bodies.push(sesEvent('Send', id, broadcastId), sesEvent('Delivery', id, broadcastId));
    if (opened) bodies.push(sesEvent('Open', id, broadcastId));
  }
  const result = await consumer(sqsEvent([...bodies, ...bodies].map((body) => ({ body }))));
  expect(result.batchItemFailures).toEqual([]);
});
afterAll(() => table?.stop());

describe('counting by broadcast', () => {
  it("counts a broadcast email's events under its broadcast, and still under its domain", async () => {
    const hour = Math.floor(now / HOUR) * HOUR;
    expect(await metrics.hours(hour, hour)).toEqual([
      {
        hourMs: hour,
        domain: 'acme.test',
        counts: { sent: 4, delivered: 4, opened: 2, unique_opened: 2 },
      },
    ]);
    const byBroadcast = await metrics.hours(hour, hour, {});
    expect(byBroadcast).toHaveLength(2);
    expect(byBroadcast).toEqual(
      expect.arrayContaining([
        {
          hourMs: hour,
          domain: 'acme.test',
          broadcastId: spring,
          counts: { sent: 2, delivered: 2, opened: 1, unique_opened: 1 },
        },
        { hourMs: hour, domain: 'acme.test', broadcastId: autumn, counts: { sent: 1, delivered: 1 } },
      ]),
    );
    expect(await metrics.hours(hour, hour, { ids: [autumn] })).toEqual([
      { hourMs: hour, domain: 'acme.test', broadcastId: autumn, counts: { sent: 1, delivered: 1 } },
    ]);
  });

  it('counts an opt-out through a broadcast email under its broadcast', async () => {
    const seen: unknown[][] = [];
    const counter: MetricsCounter = { count: async (...args) => void seen.push(args) };
    const emailsRead = {
      getContent: async () => ({
        from: 'News <news@acme.test>',
        to: ['ann@example.com'],
        cc: [],
        bcc: [],
        broadcast_id: spring,
      }),
    } as unknown as Parameters<typeof unsubscribeCounter>[0];
    await unsubscribeCounter(emailsRead, counter)('em_x', new Date(now).toISOString());
    expect(seen).toEqual([['acme.test', { unsubscribed: 1 }, 'em_x', spring]]);
  });
});

describe('GET /v1/emails/metrics by broadcast', () => {
  it("answers a row per broadcast, named, counting its emails only, in Resend's shape", async () => {
    const { status, body } = await get({
      dimensions: 'broadcast',
      metrics: 'sent,delivered,unique_opened,open_rate',
    });
    expect(status).toBe(200);
    expectResendShape(body, 'GetEmailsMetricsResponse');
    expect(emailMetricsResponseSchema.safeParse(body).success).toBe(true);
    expect(body.dimensions).toEqual(['broadcast']);
    // The transactional email is not in it: the rows add up to the totals.
    expect(body.totals).toEqual({ sent: 3, delivered: 3, unique_opened: 1, open_rate: 0.3333 });
    expect(body.data).toEqual([
      {
        broadcast_id: autumn,
        broadcast_name: 'Autumn news',
        sent: 1,
        delivered: 1,
        unique_opened: 0,
        open_rate: 0,
      },
      {
        broadcast_id: spring,
        broadcast_name: 'Spring news',
        sent: 2,
        delivered: 2,
        unique_opened: 1,
        open_rate: 0.5,
      },
    ]);
  });

  it('filters by broadcast_id, with period and domain rows', async () => {
    const acme = await storeDomain(repos.domains, 'acme.test', 'verified');
    const { status, body } = await get({
      broadcast_id: spring,
      dimensions: 'period,domain,broadcast',
      granularity: 'hourly',
      start_date: new Date(now - HOUR).toISOString(),
      metrics: 'sent',
    });
    expect(status).toBe(200);
    const hour = Math.floor(now / HOUR) * HOUR;
    expect(body.totals).toEqual({ sent: 2 });
    expect(body.data).toEqual([
      {
        period: new Date(hour - HOUR).toISOString(),
        domain_id: acme.id,
        domain_name: 'acme.test',
        broadcast_id: spring,
        broadcast_name: 'Spring news',
        sent: 0,
      },
      {
        period: new Date(hour).toISOString(),
        domain_id: acme.id,
        domain_name: 'acme.test',
        broadcast_id: spring,
        broadcast_name: 'Spring news',
        sent: 2,
      },
    ]);
    // Our domain ids are TypeIDs (dom_…), Resend's UUIDs; the rest of each row fits its schema.
    expectResendShape(
      { ...body, data: body.data.map((row: object) => ({ ...row, domain_id: undefined })) },
      'GetEmailsMetricsResponse',
    );
    // Without dimensions: the broadcast's totals.
    expect((await get({ broadcast_id: autumn, metrics: 'sent,delivered' })).body).toMatchObject({
      totals: { sent: 1, delivered: 1 },
    });
    // The same query without the filter counts every email, as before.
    expect((await get({ metrics: 'sent' })).body.totals).toEqual({ sent: 4 });
  });

  it.each([
    [{ broadcast_id: '019a0000-0000-7000-8000-000000000000' }, 'no such broadcast'],
    [{ broadcast_id: 'bc_1' }, 'broadcast_id must be broadcast ids'],
    [{ dimensions: 'broadcast,email' }, 'email is not supported'],
  ])('refuses %j with a 400 that says why', async (query, why) => {
    const { status, body } = await get(query);
    expect(status).toBe(400);
    expect(body.name).toBe('validation_error');
    expect(JSON.stringify(body)).toContain(why);
  });

  it("takes the official SDK's request: broadcastId and the broadcast dimension, comma-joined", async () => {
    let sent: URL | undefined;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const request = new Request(input as string | URL | Request, init);
      sent = new URL(request.url);
      const response = await api()(
        httpEvent({
          method: 'GET',
          path: sent.pathname,
          routeKey: 'GET /v1/emails/metrics',
          token,
          query: Object.fromEntries(sent.searchParams),
        }),
        context(),
      );
      return new Response(response.body, {
        status: response.statusCode,
        headers: { 'content-type': 'application/json' },
      });
    });
    try {
      const answer = await new Resend('re_test_key').emails.metrics({
        broadcastId: [spring, autumn],
        dimensions: ['broadcast'],
        metrics: ['sent'],
      });
      expect(sent?.searchParams.get('broadcast_id')).toBe(`${spring},${autumn}`);
      expect(sent?.searchParams.get('dimensions')).toBe('broadcast');
      expect(answer.error).toBeNull();
      expect(answer.data?.totals).toEqual({ sent: 3 });
      expect(answer.data?.data?.map((row) => row.broadcast_name)).toEqual(['Autumn news', 'Spring news']);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('roll-up by broadcast', () => {
  it("keeps each broadcast's days in its own partition: the answers stay the same, a filter reads only its partition", async () => {
    const query = { dimensions: 'period,broadcast', granularity: 'hourly', start_date: '2026-11-21' };
    const before = (await get(query)).body;
    const plainBefore = (await get({ dimensions: 'domain', start_date: '2026-11-21' })).body;
    now += 2 * HOUR;
    while ((await metrics.rollUp(now)).hours > 0);
    const end = { end_date: before.end_date };
    const after = (await get({ ...query, ...end })).body;
    expect(after.totals).toEqual(before.totals);
    expect(after.data).toEqual(before.data);
    const plainAfter = (await get({ dimensions: 'domain', start_date: '2026-11-21', ...end })).body;
    expect(plainAfter.totals).toEqual(plainBefore.totals);

    const hour = Math.floor(Date.parse('2026-11-22T03:30:00.000Z') / HOUR) * HOUR;
    const { Item } = await table.db.send(
      new GetCommand({
        TableName: table.tableName,
        Key: {
          pk: keys.metricsBroadcastDays('2026-11', shardOf(spring, DAY_PARTITIONS)),
          sk: keys.metricsBroadcastDaySk(spring, '2026-11-22', 'acme.test'),
        },
      }),
    );
    expect(Item?.h03).toEqual({ sent: 2, delivered: 2, opened: 1, unique_opened: 1 });

    // A filtered read queries the broadcast's own partition of the month, not every partition.
    const read: string[] = [];
    const db = Object.assign(Object.create(table.db), {
      send: (command: { input: { ExpressionAttributeValues?: Record<string, unknown> } }) => {
        const pk = command.input.ExpressionAttributeValues?.[':pk'];
        if (typeof pk === 'string' && pk.startsWith('METRICS#')) read.push(pk);
        return (table.db.send as (c: unknown) => Promise<unknown>)(command);
      },
    }) as DynamoDBDocumentClient;
    const filtered = await get({ broadcast_id: spring, metrics: 'sent', ...end }, db);
    expect(filtered.body.totals).toEqual({ sent: 2 });
    expect(read.filter((pk) => pk.startsWith('METRICS#BDAYS#'))).toEqual([
      keys.metricsBroadcastDays('2026-11', shardOf(spring, DAY_PARTITIONS)),
    ]);
    expect(read.filter((pk) => pk.startsWith('METRICS#DAYS#'))).toEqual([]);
    expect((await metrics.hours(hour, hour))[0]?.counts.sent).toBe(4);
  });
});
