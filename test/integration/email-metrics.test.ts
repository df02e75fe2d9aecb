/**
 * The email metrics through their real paths: SES events through the events consumer and the send
 * consumer over the emulated table (each counted once, however duplicated or reordered), the
 * sweep's roll-up, and GET /v1/emails/metrics with API Gateway v2 events, its answers checked
 * against Resend's `GetEmailsMetricsResponse`.
 */
import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import {
  DAY_PARTITIONS,
  DynamoMetricsStore,
  MAX_RAW_HOURS,
  METRIC_SHARDS,
  PARALLEL_QUERIES,
} from '../../functions/adapters/dynamodb/metrics-store.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { keys, shardOf } from '../../functions/adapters/dynamodb/table.js';
import type { SesEvent } from '../../functions/adapters/ses/events.js';
import { type Mailer, MailerError } from '../../functions/emails/ports.js';
import { makeHandler as makeMetrics } from '../../functions/handlers/get-email-metrics.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { makeHandler as makeEventsConsumer } from '../../functions/handlers/process-ses-events.js';
import { emailMetricsResponseSchema } from '../../functions/metrics/answers.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { context, httpEvent, parseBody, sqsEvent } from '../support/events.js';
import { emailContent, fullAccessKey, storeDomain } from '../support/fakes.js';
import { losingFirstAnswer } from '../support/losing-answer.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const FIXTURES = {
  bounce: fixture('ses-event-bounce.json'),
  open: fixture('ses-event-open.json'),
  click: fixture('ses-event-click.json'),
};
const HOUR = 3_600_000;

/** An SES event of this email, from a fixture, changed as given. */
function sesEvent(
  kind: keyof typeof FIXTURES,
  id: string,
  change: (e: SesEvent & Record<string, unknown>) => void = () => undefined,
): string {
  const event = JSON.parse(FIXTURES[kind].replaceAll('__EMAIL_ID__', id));
  change(event);
  return JSON.stringify(event);
}
const send = (id: string) =>
  sesEvent('bounce', id, (e) => {
    e.eventType = 'Send';
    delete e.bounce;
    e.send = {};
  });
const delivery = (id: string, to = 'a@example.com') =>
  sesEvent('bounce', id, (e) => {
    e.eventType = 'Delivery';
    delete e.bounce;
    e.delivery = { timestamp: '2026-11-22T03:20:05.000Z', recipients: [to] };
  });
const bounce = (id: string, type = 'Permanent') =>
  sesEvent('bounce', id, (e) => {
    (e.bounce as { bounceType: string }).bounceType = type;
  });
const open = (id: string, userAgent?: string) =>
  sesEvent('open', id, (e) => {
    if (userAgent) (e.open as { userAgent: string }).userAgent = userAgent;
  });
const click = (id: string) => sesEvent('click', id);

let table: TestTable;
let emails: DynamoEmailRepository;
let repos: ReturnType<typeof createRepositories>;
let token: string;
let now = Date.parse('2026-11-22T03:30:00.000Z');
const clock = { now: () => new Date(now) };
let metrics: DynamoMetricsStore;

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  repos = createRepositories(table.tableName, table.db);
  metrics = new DynamoMetricsStore(table.db, table.tableName, () => now);
  token = await fullAccessKey(repos.apiKeys);
});
afterAll(() => table.stop());

const contentOf = (to: string[], from: string) =>
  emailContent({ from: `"Acme" <${from}>`, to, cc: [], bcc: [] });
async function queuedEmail(to = ['a@example.com'], from = 'hello@acme.test') {
  const id = newEmailId();
  await emails.create({ id, created_at: new Date(now).toISOString(), content: contentOf(to, from) });
  return id;
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const api = () => makeMetrics({ apiKeys: repos.apiKeys, domains: repos.domains, metrics, clock });
async function get(query: Record<string, string> = {}) {
  const response = await api()(
    httpEvent({ method: 'GET', path: '/v1/emails/metrics', token, query }),
    context(),
  );
  return { status: response.statusCode, body: parseBody(response) };
}

describe('counting on the write path', () => {
  it('counts each SES event once, however duplicated and reordered, in one batch or many', async () => {
    const consumer = makeEventsConsumer({ emails, metrics });
    const a = await queuedEmail();
    const b = await queuedEmail(['bounce@example.com']);
    const c = await queuedEmail(['x@example.com', 'y@example.com']);
    // Newest first, each twice, and some again in later batches.
    const all = [
      click(a),
      open(a, 'Reader/2'),
      open(a),
      delivery(a),
      send(a),
      bounce(b, 'Transient'),
      send(b),
      delivery(c, 'y@example.com'),
      delivery(c, 'x@example.com'),
      send(c),
    ];
    const result = await consumer(sqsEvent([...all, ...all].map((body) => ({ body }))));
    expect(result.batchItemFailures).toEqual([]);
    for (const body of [...all].reverse()) await consumer(sqsEvent([{ body }]));
    await consumer(sqsEvent(all.map((body) => ({ body }))));

    const hour = Math.floor(now / HOUR) * HOUR;
    const counted = await metrics.hours(hour, hour);
    expect(counted).toEqual([
      {
        hourMs: hour,
        domain: 'acme.test',
        counts: {
          sent: 3,
          delivered: 2,
          bounced: 1,
          bounced_transient: 1,
          opened: 2,
          unique_opened: 1,
          clicked: 1,
          unique_clicked: 1,
        },
      },
    ]);
  });

  it("counts the send consumer's sends, failures and suppressed emails once each", async () => {
    now += HOUR; // a fresh hour
    const hour = Math.floor(now / HOUR) * HOUR;
    const sent = await queuedEmail(['to@example.com'], 'news@beta.test');
    const rejected = await queuedEmail(['to@example.com'], 'news@beta.test');
    const suppressedOnly = await queuedEmail(['gone@example.com'], 'news@beta.test');
    await repos.suppressions.add({
      id: 'sup_1',
      email: 'gone@example.com',
      origin: 'bounce',
      source_id: 'x',
      created_at: new Date(now).toISOString(),
    });
    const mailer: Mailer = {
      send: async (email) => {
        if (email.id === rejected)
          throw new MailerError('Email address is not verified', 'rejected', 'MessageRejected');
        return { messageId: `ses-${email.id}` };
      },
    };
    const consumer = makeConsumer({
      emails,
      suppressions: repos.suppressions,
      metrics,
      mailer,
      clock,
      maxReceiveCount: 5,
      log: { info: () => undefined, warn: console.warn, error: console.error },
    });
    const jobs = [
      { id: sent, content: contentOf(['to@example.com'], 'news@beta.test') },
      { id: rejected, content: contentOf(['to@example.com'], 'news@beta.test') },
      { id: suppressedOnly, content: contentOf(['gone@example.com'], 'news@beta.test') },
    ].map((job) => ({ body: JSON.stringify(job) }));
    expect((await consumer(sqsEvent(jobs))).batchItemFailures).toEqual([]);
    // The same messages again (SQS delivers at least once) and the Send event after: nothing new.
    await consumer(sqsEvent(jobs));
    await makeEventsConsumer({ emails, metrics })(sqsEvent([{ body: send(sent) }]));
    expect(await metrics.hours(hour, hour)).toEqual([
      { hourMs: hour, domain: 'beta.test', counts: { sent: 1, failed: 1, suppressed: 1 } },
    ]);
  });

  it('spreads one hour of one domain over every shard (no hot partition)', () => {
    const perShard = new Array(METRIC_SHARDS).fill(0);
    for (let i = 0; i < 64_000; i++) perShard[shardOf(newEmailId(), METRIC_SHARDS)]++;
    // About 1,000 each; none near twice that.
    expect(Math.min(...perShard)).toBeGreaterThan(850);
    expect(Math.max(...perShard)).toBeLessThan(1_150);
  });
});

describe('GET /v1/emails/metrics', () => {
  it("answers every counted metric and rate over the default range, in Resend's shape", async () => {
    const { status, body } = await get();
    expect(status).toBe(200);
    expectResendShape(body, 'GetEmailsMetricsResponse');
    expect(emailMetricsResponseSchema.safeParse(body).success).toBe(true);
    expect(body).toMatchObject({
      object: 'metrics',
      end_date: new Date(now).toISOString(),
      start_date: new Date(now - 6 * 24 * HOUR).toISOString(),
      dimensions: [],
      granularity: 'daily',
    });
    expect(body.data).toBeUndefined();
    expect(body.totals).toEqual({
      sent: 4,
      delivered: 2,
      bounced: 1,
      bounced_transient: 1,
      bounced_permanent: 0,
      bounced_undetermined: 0,
      complained: 0,
      failed: 1,
      suppressed: 1,
      opened: 2,
      clicked: 1,
      unique_opened: 1,
      unique_clicked: 1,
      delivery_delayed: 0,
      received: 0,
      unsubscribed: 0,
      delivery_rate: 0.5,
      bounce_rate: 0.25,
      complaint_rate: 0,
      open_rate: 0.5,
      click_rate: 0.5,
      unsubscribe_rate: 0,
    });
  });

  it('breaks down by hour and domain, filters by domain_id, and omits metrics not asked for', async () => {
    const acme = await storeDomain(repos.domains, 'acme.test', 'verified');
    const { status, body } = await get({
      start_date: new Date(now - 2 * HOUR).toISOString(),
      granularity: 'hour',
      metrics: 'sent,delivered,delivery_rate',
      dimensions: 'period,domain',
    });
    expect(status).toBe(200);
    expect(body.granularity).toBe('hourly');
    expect(body.metrics).toEqual(['sent', 'delivered', 'delivery_rate']);
    expect(body.totals).toEqual({ sent: 4, delivered: 2, delivery_rate: 0.5 });
    const hour = Math.floor(now / HOUR) * HOUR;
    const period = (ms: number) => new Date(ms).toISOString();
    expect(body.data).toEqual([
      {
        period: period(hour - 2 * HOUR),
        domain_id: acme.id,
        domain_name: 'acme.test',
        sent: 0,
        delivered: 0,
        delivery_rate: 0,
      },
      { period: period(hour - 2 * HOUR), domain_name: 'beta.test', sent: 0, delivered: 0, delivery_rate: 0 },
      {
        period: period(hour - HOUR),
        domain_id: acme.id,
        domain_name: 'acme.test',
        sent: 3,
        delivered: 2,
        delivery_rate: 0.6667,
      },
      { period: period(hour - HOUR), domain_name: 'beta.test', sent: 0, delivered: 0, delivery_rate: 0 },
      {
        period: period(hour),
        domain_id: acme.id,
        domain_name: 'acme.test',
        sent: 0,
        delivered: 0,
        delivery_rate: 0,
      },
      { period: period(hour), domain_name: 'beta.test', sent: 1, delivered: 0, delivery_rate: 0 },
    ]);
    // Resend's ids are UUIDs and ours TypeIDs (dom_…), as everywhere in this service: the row fits
    // Resend's schema but for that format.
    expectResendShape(
      { ...body, data: body.data.map((row: Record<string, unknown>) => ({ ...row, domain_id: undefined })) },
      'GetEmailsMetricsResponse',
    );

    const filtered = await get({ domain_id: acme.id, dimensions: 'domain', metrics: 'sent' });
    expect(filtered.body.totals).toEqual({ sent: 3 });
    expect(filtered.body.data).toEqual([{ domain_id: acme.id, domain_name: 'acme.test', sent: 3 }]);
  });

  it('buckets days in the time zone asked for', async () => {
    // 02:30 and 03:30 UTC on the 22nd are the evening of the 21st in New York.
    const { body } = await get({
      start_date: '2026-11-20',
      end_date: '2026-11-22',
      timezone: 'America/New_York',
      dimensions: 'period',
      metrics: 'sent',
    });
    expect(body.start_date).toBe('2026-11-20T05:00:00.000Z');
    // The 22nd in New York has not begun yet (its end is clamped to now).
    expect(body.data).toEqual([
      { period: '2026-11-20T05:00:00.000Z', sent: 0 },
      { period: '2026-11-21T05:00:00.000Z', sent: 4 },
    ]);
    const utc = await get({
      start_date: '2026-11-21',
      end_date: '2026-11-22',
      dimensions: 'period',
      metrics: 'sent',
    });
    expect(utc.body.data).toEqual([
      { period: '2026-11-21T00:00:00.000Z', sent: 0 },
      { period: '2026-11-22T00:00:00.000Z', sent: 4 },
    ]);
  });

  it('clamps a future end to now', async () => {
    const { body } = await get({ end_date: '2030-01-01T00:00:00Z', metrics: 'sent' });
    expect(body.end_date).toBe(new Date(now).toISOString());
  });

  it.each([
    [{ start_date: '2026-01-01', end_date: '2026-11-01' }, 'at most 90 days'],
    [{ start_date: '2026-11-23T00:00:00Z', end_date: '2026-11-22T00:00:00Z' }, 'on or before end_date'],
    [{ start_date: 'yesterday' }, 'start_date must be an ISO 8601 date'],
    [{ timezone: 'Mars/Olympus' }, 'IANA time zone'],
    [{ granularity: 'minutely' }, 'granularity must be one of'],
    [{ metrics: 'bogus' }, 'metrics must be among'],
    [{ dimensions: 'email' }, 'email is not supported'],
    [{ broadcast_id: 'bc_1' }, 'broadcast_id must be broadcast ids'],
    [{ email_id: 'em_1' }, 'email_id is not supported'],
    [{ domain_id: 'dom_00000000000000000000000000' }, 'no such domain'],
    [{ domain_id: Array.from({ length: 101 }, (_, i) => `dom_${i}`).join(',') }, 'at most 100'],
    [{ limit: '10' }, 'unknown field'],
    [{ start_date: '2026-02-30' }, 'start_date must be an ISO 8601 date'],
  ])('refuses %j with a 400 that says why', async (query, why) => {
    const { status, body } = await get(query);
    expect(status).toBe(400);
    expect(body.name).toBe('validation_error');
    expect(JSON.stringify(body)).toContain(why);
  });
});

it('refuses a domain_id of 3,000 characters with a 400 naming the field (not a 500 from DynamoDB)', async () => {
  const { status, body } = await get({ domain_id: `dom_${'x'.repeat(3_000)}` });
  expect(status).toBe(400);
  expect(body.message).toContain('domain_id must be domain ids');
});

describe('roll-up', () => {
  it('moves finished hours into day items: the answer stays the same, read from them instead of the shards', async () => {
    const query = {
      start_date: '2026-11-21',
      metrics: 'sent,opened',
      dimensions: 'period,domain',
      granularity: 'hourly',
    };
    const before = (await get(query)).body;
    now += 2 * HOUR;
    // A few hours a run, until every finished hour is rolled up.
    let runs = 0;
    while ((await metrics.rollUp(now)).hours > 0) runs++;
    expect(runs).toBeGreaterThanOrEqual(1);
    expect((await metrics.rollUp(now)).hours).toBe(0);
    const after = (await get({ ...query, end_date: before.end_date })).body;
    expect(after.totals).toEqual(before.totals);
    expect(after.data).toEqual(before.data);
    // Each domain's day items are in its own partition of the month (a hash of its name), not one
    // partition for every domain: read back exactly where the roll-up put them.
    const rows = after.data as { domain_name: string; period: string }[];
    const found = new Set<string>();
    for (const row of rows) {
      const day = row.period.slice(0, 10);
      const { Item } = await table.db.send(
        new GetCommand({
          TableName: table.tableName,
          Key: {
            pk: keys.metricsDays(day.slice(0, 7), shardOf(row.domain_name, DAY_PARTITIONS)),
            sk: keys.metricsDaySk(day, row.domain_name),
          },
        }),
      );
      if (Item) found.add(row.domain_name);
    }
    expect([...found].sort()).toEqual([...new Set(rows.map((r) => r.domain_name))].sort());
    // A rolled hour is read from its day item: a count written into its shards now is not seen.
    const hour = Math.floor(Date.parse('2026-11-22T03:30:00.000Z') / HOUR) * HOUR;
    await new DynamoMetricsStore(table.db, table.tableName, () => hour + 1).count(
      'acme.test',
      { sent: 100 },
      'x',
    );
    expect(await metrics.hours(hour, hour)).toEqual([
      expect.objectContaining({ domain: 'acme.test', counts: expect.objectContaining({ sent: 3 }) }),
    ]);
  });
});

describe('counted once, whatever the path', () => {
  /** This domain's counts in the current hour (each test its own domain, so none sees another's). */
  const countsOf = async (domain: string) => {
    const hour = Math.floor(now / HOUR) * HOUR;
    return (await metrics.hours(hour, hour)).find((h) => h.domain === domain)?.counts;
  };

  it('counts an email with a suppressed recipient once, though SES throttled it twice before taking it', async () => {
    const to = ['kept@example.com', 'gone-again@example.com'];
    const id = await queuedEmail(to, 'news@throttled.test');
    await repos.suppressions.add({
      id: 'sup_2',
      email: 'gone-again@example.com',
      origin: 'bounce',
      source_id: 'x',
      created_at: new Date(now).toISOString(),
    });
    let throttles = 2;
    const mailer: Mailer = {
      send: async (email) => {
        if (throttles-- > 0) throw new MailerError('Maximum sending rate exceeded', 'rate', 'Throttling');
        return { messageId: `ses-${email.id}` };
      },
    };
    const consumer = makeConsumer({
      emails,
      suppressions: repos.suppressions,
      metrics,
      mailer,
      clock,
      maxReceiveCount: 5,
    });
    const job = { body: JSON.stringify({ id, content: contentOf(to, 'news@throttled.test') }) };
    // Each throttle releases the claim and puts the message back; the third try is sent.
    for (let attempt = 0; attempt < 3; attempt++) {
      now += 1_000;
      await consumer(sqsEvent([job]));
    }
    expect(throttles).toBe(-1);
    expect((await emails.getState(id))?.sent_at).toBeDefined();
    expect(await countsOf('throttled.test')).toEqual({ sent: 1, suppressed: 1 });
  });

  it('counts an open whose later writes failed: its retry finds the event stored, and it is still counted once', async () => {
    const id = await queuedEmail(['a@example.com'], 'news@opened.test');
    // From the domain of this test (the fixture's is acme.test).
    const event = open(id).replaceAll('acme.test', 'opened.test');
    let failures = 1;
    const failing = Object.assign(Object.create(emails), {
      recordSent: (...args: Parameters<DynamoEmailRepository['recordSent']>) => {
        if (failures-- > 0) return Promise.reject(new Error('ProvisionedThroughputExceededException'));
        return emails.recordSent(...args);
      },
    }) as DynamoEmailRepository;
    const consumer = makeEventsConsumer({ emails: failing, metrics, log: quiet });
    expect((await consumer(sqsEvent([{ body: event }]))).batchItemFailures).toHaveLength(1);
    expect((await consumer(sqsEvent([{ body: event }]))).batchItemFailures).toEqual([]);
    expect(await countsOf('opened.test')).toEqual({ sent: 1, opened: 1, unique_opened: 1 });
  });

  it("counts a send whose record's answer was lost, when the SDK's retry finds it recorded", async () => {
    const lossy = losingFirstAnswer(table, (e) => e.includes('sent_at = if_not_exists'));
    const id = await queuedEmail(['to@example.com'], 'news@lost.test');
    const mailer: Mailer = { send: async (email) => ({ messageId: `ses-${email.id}` }) };
    const consumer = makeConsumer({ emails: lossy.repo, metrics, mailer, clock, maxReceiveCount: 5 });
    const job = { body: JSON.stringify({ id, content: contentOf(['to@example.com'], 'news@lost.test') }) };
    expect((await consumer(sqsEvent([job]))).batchItemFailures).toEqual([]);
    expect(lossy.seen.retried).toBe(1);
    expect(await countsOf('lost.test')).toEqual({ sent: 1 });
    lossy.stop();
  });

  it('refuses a breakdown too large for one answer with a 400 that says what to narrow', async () => {
    // Five domains have counts by now: hourly over 90 days, 2,161 periods each.
    const query = {
      start_date: new Date(now - 90 * 24 * HOUR).toISOString(),
      granularity: 'hourly',
      dimensions: 'period,domain',
    };
    const { status, body } = await get(query);
    expect(status).toBe(400);
    expect(body.message).toMatch(/rows.*narrow the range/);
    const fewer = await get({ ...query, metrics: 'sent', dimensions: 'period' });
    expect(fewer.status).toBe(200);
    expect(fewer.body.data).toHaveLength(2_161);
  });
});

describe('reads when the roll-up is behind', () => {
  it('reads hours not rolled up with a bounded number of Queries in flight, however many hours', async () => {
    let inFlight = 0;
    let most = 0;
    let queries = 0;
    const db = Object.assign(Object.create(table.db), {
      send: async (command: unknown) => {
        queries++;
        most = Math.max(most, ++inFlight);
        try {
          return await (table.db.send as (c: unknown) => Promise<unknown>)(command);
        } finally {
          inFlight--;
        }
      },
    }) as typeof table.db;
    // The sweep has not run for 10 hours.
    const later = Math.floor(now / HOUR) * HOUR + 10 * HOUR;
    const store = new DynamoMetricsStore(db, table.tableName, () => later + 60_000);
    await store.hours(later - (MAX_RAW_HOURS - 1) * HOUR, later);
    expect(most).toBeLessThanOrEqual(PARALLEL_QUERIES);
    expect(queries).toBeGreaterThan(3 * METRIC_SHARDS);
  });

  it('answers a 503 to retry when more of the range than it reads at once is not rolled up', async () => {
    const later = now + 30 * HOUR;
    const store = new DynamoMetricsStore(table.db, table.tableName, () => later);
    const handler = makeMetrics({
      apiKeys: repos.apiKeys,
      domains: repos.domains,
      metrics: store,
      clock: { now: () => new Date(later) },
    });
    const response = await handler(
      httpEvent({ method: 'GET', path: '/v1/emails/metrics', token, query: {} }),
      context(),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe('60');
    expect(parseBody(response)).toMatchObject({
      name: 'service_unavailable',
      message: expect.stringMatching(/not rolled up yet/),
    });
    // A range that ends before the gap is answered.
    const earlier = await handler(
      httpEvent({
        method: 'GET',
        path: '/v1/emails/metrics',
        token,
        query: { end_date: new Date(now - 2 * HOUR).toISOString() },
      }),
      context(),
    );
    expect(earlier.statusCode).toBe(200);
  });
});
