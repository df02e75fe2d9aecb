import { describe, expect, it } from 'vitest';
import {
  COUNTED_METRICS,
  hoursOf,
  MAX_ANSWER_ROWS,
  MAX_ANSWER_VALUES,
  metricsAnswer,
  periodOf,
  SUPPORTED_METRICS,
} from '../../functions/metrics/model.js';
import { emailMetricsQuerySchema, resolveMetricsQuery } from '../../functions/metrics/query.js';

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const resolve = (query: Record<string, string>, now = '2026-07-08T10:30:00Z') =>
  resolveMetricsQuery(emailMetricsQuerySchema.parse(query), at(now));

describe('email metrics periods', () => {
  it('starts weeks on Monday and months on the 1st, at midnight in the zone', () => {
    // Wednesday 8 July 2026, 10:00 UTC.
    const hour = at('2026-07-08T10:00:00Z');
    expect(periodOf(hour, 'weekly', 'UTC')).toBe('2026-07-06T00:00:00.000Z');
    expect(periodOf(hour, 'monthly', 'UTC')).toBe('2026-07-01T00:00:00.000Z');
    expect(periodOf(hour, 'monthly', 'Europe/Paris')).toBe('2026-06-30T22:00:00.000Z');
    expect(periodOf(hour, 'hourly', 'Asia/Tokyo')).toBe('2026-07-08T10:00:00.000Z');
  });

  it('follows daylight saving time: a day in New York starts at 04:00 UTC in summer, 05:00 in winter', () => {
    expect(periodOf(at('2026-07-08T10:00:00Z'), 'daily', 'America/New_York')).toBe(
      '2026-07-08T04:00:00.000Z',
    );
    expect(periodOf(at('2026-12-08T10:00:00Z'), 'daily', 'America/New_York')).toBe(
      '2026-12-08T05:00:00.000Z',
    );
  });

  it('puts an hour of a half-hour zone in the day its start falls in', () => {
    // 18:00 UTC is 23:30 in India: still the 8th there.
    expect(periodOf(at('2026-07-08T18:00:00Z'), 'daily', 'Asia/Kolkata')).toBe('2026-07-07T18:30:00.000Z');
    expect(periodOf(at('2026-07-08T19:00:00Z'), 'daily', 'Asia/Kolkata')).toBe('2026-07-08T18:30:00.000Z');
  });

  it('touches every hour of a range, whole', () => {
    expect(hoursOf(at('2026-07-08T10:30:00Z'), at('2026-07-08T12:10:00Z'))).toEqual([
      at('2026-07-08T10:00:00Z'),
      at('2026-07-08T11:00:00Z'),
      at('2026-07-08T12:00:00Z'),
    ]);
  });
});

describe('email metrics query', () => {
  it("fills Resend's defaults: now, 6 days before, daily, UTC, every metric, no dimension", () => {
    const query = resolve({});
    expect(query.endMs).toBe(at('2026-07-08T10:30:00Z'));
    expect(query.startMs).toBe(at('2026-07-02T10:30:00Z'));
    expect(query).toMatchObject({ granularity: 'daily', timezone: 'UTC', dimensions: [] });
    expect(query.metrics).toContain('unique_opened');
    expect(query.metrics).toContain('received');
    expect(query.metrics).toContain('unsubscribed');
    expect(query.metrics).toContain('unsubscribe_rate');
  });

  it('reads a date-only end as the end of that day in the zone, and a datetime without offset as UTC', () => {
    const query = resolve({ start_date: '2026-07-01', end_date: '2026-07-02', timezone: 'Europe/Paris' });
    expect(query.startMs).toBe(at('2026-06-30T22:00:00Z'));
    expect(query.endMs).toBe(at('2026-07-02T22:00:00Z') - 1);
    expect(resolve({ start_date: '2026-07-01T12:00' }).startMs).toBe(at('2026-07-01T12:00:00Z'));
  });

  it('takes exactly 90 days, not a millisecond more', () => {
    expect(() => resolve({ start_date: '2026-04-09T10:30:00Z' })).not.toThrow();
    expect(() => resolve({ start_date: '2026-04-09T10:29:59.999Z' })).toThrow('at most 90 days');
  });

  it('takes the aliases of the issue (hour, day) and a repeated parameter as API Gateway joins it', () => {
    expect(resolve({ granularity: 'hour' }).granularity).toBe('hourly');
    expect(resolve({ granularity: 'day' }).granularity).toBe('daily');
    expect(resolve({ metrics: 'sent,delivered, sent' }).metrics).toEqual(['sent', 'delivered']);
  });
});

describe('email metrics answer', () => {
  it('gives rates of 0 when nothing was sent, and omits what was not asked for', () => {
    const query = resolve({ metrics: 'bounce_rate,open_rate,sent' });
    const body = metricsAnswer(query, [], new Map());
    expect(body.totals).toEqual({ bounce_rate: 0, open_rate: 0, sent: 0 });
    expect(body.data).toBeUndefined();
  });

  it('rounds rates to 4 decimals: open rate of the delivered, bounce rate of the sent', () => {
    const query = resolve({ metrics: 'open_rate,bounce_rate,delivery_rate' });
    const hourMs = at('2026-07-08T09:00:00Z');
    const counts = { sent: 3, delivered: 3, bounced: 1, unique_opened: 2, opened: 9 };
    expect(metricsAnswer(query, [{ hourMs, domain: 'a.test', counts }], new Map()).totals).toEqual({
      open_rate: 0.6667,
      bounce_rate: 0.3333,
      delivery_rate: 1,
    });
    expect(hourMs % HOUR).toBe(0);
  });

  it('refuses an answer of more rows or values than a Lambda answer can carry, saying what to narrow', () => {
    // Hourly over 90 days by domain, 10 domains with counts: 21,610 rows (about 8 MB).
    const query = resolve(
      { start_date: '2026-04-09T10:30:00Z', granularity: 'hourly', dimensions: 'period,domain' },
      '2026-07-08T10:30:00Z',
    );
    const hours = Array.from({ length: 10 }, (_, i) => ({
      hourMs: at('2026-07-08T09:00:00Z'),
      domain: `d${i}.test`,
      counts: { sent: 1 },
    }));
    expect(() => metricsAnswer(query, hours, new Map())).toThrow(/at most 5,000 rows.*narrow the range/);
    // The same with one domain is answered.
    expect(metricsAnswer(query, hours.slice(0, 1), new Map()).data).toHaveLength(2_161);
  });

  it('keeps the largest answer it gives under 5 MB (Lambda refuses answers over 6 MB)', () => {
    // Measured: 3.4 MB with every metric, 1.4 MB with one (5,000 rows, 260-character domain names).
    const counts = Object.fromEntries(COUNTED_METRICS.map((m) => [m, 999_999_999]));
    const longName = (i: number) =>
      `${'x'.repeat(63)}.${'y'.repeat(63)}.${'z'.repeat(63)}.${String(i).padStart(8, '0')}.test`;
    const nowIso = '2026-07-08T10:30:00Z';
    // Every metric, as many rows as the values allow; and one metric, the most rows.
    for (const [metrics, rows] of [
      [undefined, Math.min(MAX_ANSWER_ROWS, Math.floor(MAX_ANSWER_VALUES / SUPPORTED_METRICS.length))],
      ['sent', MAX_ANSWER_ROWS],
    ] as const) {
      const query = resolve(
        {
          start_date: '2026-07-08T00:00:00Z',
          granularity: 'hourly',
          dimensions: 'domain',
          ...(metrics ? { metrics } : {}),
        },
        nowIso,
      );
      const hours = Array.from({ length: rows }, (_, i) => ({
        hourMs: at('2026-07-08T09:00:00Z'),
        domain: longName(i),
        counts,
      }));
      const domains = new Map(hours.map((h) => [h.domain, { id: `dom_${'0'.repeat(26)}`, name: h.domain }]));
      const bytes = Buffer.byteLength(JSON.stringify(metricsAnswer(query, hours, domains)));
      expect(bytes).toBeLessThan(5 * 1024 * 1024);
    }
  });
});

describe('email metrics query checks', () => {
  const refusal = (query: Record<string, string>) => emailMetricsQuerySchema.safeParse(query).error?.issues;

  it('refuses a date the calendar does not have, or an hour past 23', () => {
    expect(refusal({ start_date: '2026-02-30' })?.[0]?.message).toMatch(/ISO 8601 date/);
    expect(refusal({ end_date: '2026-02-29T10:00:00Z' })).toBeDefined(); // 2026 is no leap year
    expect(refusal({ start_date: '2026-07-01T24:30:00Z' })).toBeDefined();
    expect(refusal({ start_date: '2028-02-29' })).toBeUndefined();
    expect(refusal({ start_date: '2026-07-01T23:59:59.999+02:00' })).toBeUndefined();
  });

  it('takes a domain_id only in the shape of a domain id, before anything is read', () => {
    expect(refusal({ domain_id: `dom_${'0'.repeat(26)}` })).toBeUndefined();
    expect(refusal({ domain_id: 'x'.repeat(3_000) })?.[0]?.message).toMatch(/domain_id must be domain ids/);
    expect(refusal({ domain_id: `dom_${'0'.repeat(26)},em_1` })?.[0]?.message).toContain('em_1');
  });

  it('reads an empty list as the parameter left out (a generated client sends an empty array so)', () => {
    expect(resolve({ metrics: '' }).metrics).toEqual(resolve({}).metrics);
    expect(resolve({ dimensions: '', domain_id: '' })).toMatchObject({ dimensions: [], domainIds: [] });
  });
});

describe('email metrics by broadcast (issue 41)', () => {
  const refusal = (query: Record<string, string>) => emailMetricsQuerySchema.safeParse(query).error?.issues;
  const A = '019a0000-0000-7000-8000-00000000000a';
  const B = '019a0000-0000-7000-8000-00000000000b';

  it('takes the broadcast dimension and broadcast_id as the SDK sends them (comma-joined UUIDs, up to 100)', () => {
    expect(resolve({ dimensions: 'period,broadcast', broadcast_id: `${A},${B}, ${A}` })).toMatchObject({
      dimensions: ['period', 'broadcast'],
      broadcastIds: [A, B],
    });
    expect(resolve({}).broadcastIds).toEqual([]);
    expect(refusal({ broadcast_id: 'bc_1' })?.[0]?.message).toMatch(
      /broadcast_id must be broadcast ids.*bc_1/,
    );
    expect(refusal({ broadcast_id: 'x'.repeat(3_000) })?.[0]?.message).toContain('…');
    const many = Array.from(
      { length: 101 },
      (_, i) => `019a0000-0000-7000-8000-${String(i).padStart(12, '0')}`,
    );
    expect(refusal({ broadcast_id: many.join(',') })?.[0]?.message).toContain('at most 100');
    // The email dimension stays refused.
    expect(refusal({ dimensions: 'broadcast,email' })?.[0]?.message).toMatch(/email is not supported/);
  });

  const hourMs = at('2026-07-08T09:00:00Z');
  const hours = [
    { hourMs, domain: 'a.test', counts: { sent: 10, delivered: 8 } },
    { hourMs, domain: 'a.test', broadcastId: A, counts: { sent: 4, delivered: 4, unique_opened: 2 } },
    { hourMs, domain: 'b.test', broadcastId: B, counts: { sent: 6, delivered: 5 } },
  ];
  const names = new Map([
    [A, 'Spring news'],
    [B, 'Autumn news'],
  ]);

  it('answers a row per broadcast, named, sorted by name, counting only broadcast emails (totals too)', () => {
    const query = resolve({ dimensions: 'broadcast', metrics: 'sent,delivered,open_rate' });
    const body = metricsAnswer(query, hours, new Map(), undefined, names);
    expect(body.totals).toEqual({ sent: 10, delivered: 9, open_rate: 0.2222 });
    expect(body.data).toEqual([
      { broadcast_id: B, broadcast_name: 'Autumn news', sent: 6, delivered: 5, open_rate: 0 },
      { broadcast_id: A, broadcast_name: 'Spring news', sent: 4, delivered: 4, open_rate: 0.5 },
    ]);
  });

  it('filters by broadcast_id (a broadcast without counts still gets its row), by domain and broadcast in pairs', () => {
    const one = resolve({ dimensions: 'broadcast', broadcast_id: A, metrics: 'sent' });
    expect(metricsAnswer(one, hours, new Map(), undefined, names)).toMatchObject({
      totals: { sent: 4 },
      data: [{ broadcast_id: A, broadcast_name: 'Spring news', sent: 4 }],
    });
    const quiet = '019a0000-0000-7000-8000-00000000000c';
    const none = resolve({ dimensions: 'broadcast', broadcast_id: quiet, metrics: 'sent' });
    expect(metricsAnswer(none, hours, new Map(), undefined, new Map([[quiet, 'Quiet']])).data).toEqual([
      { broadcast_id: quiet, broadcast_name: 'Quiet', sent: 0 },
    ]);
    // A filter alone: totals of that broadcast's emails, no rows.
    const filtered = resolve({ broadcast_id: B, metrics: 'sent' });
    expect(metricsAnswer(filtered, hours, new Map(), undefined, names)).toMatchObject({
      totals: { sent: 6 },
    });
    const pairs = resolve({ dimensions: 'domain,broadcast', metrics: 'sent' });
    const domains = new Map([['a.test', { id: 'dom_a', name: 'a.test' }]]);
    expect(metricsAnswer(pairs, hours, domains, undefined, new Map()).data).toEqual([
      { domain_id: 'dom_a', domain_name: 'a.test', broadcast_id: A, sent: 4 },
      { domain_name: 'b.test', broadcast_id: B, sent: 6 },
    ]);
  });

  it('keeps every period of the range by broadcast, and the rows of a domain query as they were', () => {
    const query = resolve({
      start_date: '2026-07-07',
      dimensions: 'period,broadcast',
      broadcast_id: A,
      metrics: 'sent',
    });
    expect(metricsAnswer(query, hours, new Map(), undefined, names).data).toEqual([
      { period: '2026-07-07T00:00:00.000Z', broadcast_id: A, broadcast_name: 'Spring news', sent: 0 },
      { period: '2026-07-08T00:00:00.000Z', broadcast_id: A, broadcast_name: 'Spring news', sent: 4 },
    ]);
    // Not about broadcasts: every email's counts (a reader gives them by domain, without broadcastId).
    const plain = resolve({ dimensions: 'domain', metrics: 'sent' });
    expect(metricsAnswer(plain, hours.slice(0, 1), new Map()).data).toEqual([
      { domain_name: 'a.test', sent: 10 },
    ]);
  });
});
