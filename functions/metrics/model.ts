import * as z from 'zod/mini';
import type { GlobalMeta } from 'zod/v4/core';
import { domainOf, parseAddress } from '../shared/address.js';
import { validationError } from '../shared/errors.js';
import { DOMAIN_ID_PREFIX, idPattern, isId } from '../shared/ids.js';
import { instantIn, zoneOffsetMs } from '../shared/time-zones.js';

/**
 * Email metrics in Resend's shape (`GET /v1/emails/metrics`), counted on the write path: every
 * write that records something new about an email for the first time (its send accepted, its first
 * delivery, an open event not seen before...) adds one to a small counter item for the sender's
 * domain and the hour it was recorded in (adapters/dynamodb/metrics-store.ts). A read sums those
 * hours into the periods asked for. docs/metrics.md says what each metric counts.
 */

/** What is counted, per sender domain and hour (what the counter items hold). */
export const COUNTED_METRICS = [
  'sent',
  'delivered',
  'bounced',
  'bounced_transient',
  'bounced_permanent',
  'bounced_undetermined',
  'complained',
  'failed',
  'suppressed',
  'opened',
  'clicked',
  'unique_opened',
  'unique_clicked',
  'delivery_delayed',
] as const;
export type CountedMetric = (typeof COUNTED_METRICS)[number];
export type MetricCounts = Partial<Record<CountedMetric, number>>;

/**
 * The rates, each a fraction from 0 to 1 (4 decimals), 0 when its denominator is 0: delivery and
 * bounce rates of the emails sent, complaint rate of the emails sent (as SES reckons a sender's
 * reputation), open and click rates of the emails delivered (unique: an email opened twice is one).
 */
export const RATES = {
  delivery_rate: ['delivered', 'sent'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'sent'],
  open_rate: ['unique_opened', 'delivered'],
  click_rate: ['unique_clicked', 'delivered'],
} as const satisfies Record<string, readonly [CountedMetric, CountedMetric]>;
type Rate = keyof typeof RATES;

export const SUPPORTED_METRICS = [...COUNTED_METRICS, ...(Object.keys(RATES) as Rate[])] as const;
export type MetricName = CountedMetric | Rate;

/** Resend's metrics this service has no source for: it receives no email and keeps no unsubscribes. */
const UNSUPPORTED_METRICS = ['received', 'unsubscribed', 'unsubscribe_rate'] as const;
const RESEND_DIMENSIONS = ['period', 'domain', 'email', 'broadcast'] as const;
export const SUPPORTED_DIMENSIONS = ['period', 'domain'] as const;
export type Dimension = (typeof SUPPORTED_DIMENSIONS)[number];
export const GRANULARITIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
const GRANULARITY_ALIASES: Record<string, Granularity> = {
  hour: 'hourly',
  day: 'daily',
  week: 'weekly',
  month: 'monthly',
};

export const MAX_RANGE_DAYS = 90;
export const DEFAULT_RANGE_DAYS = 6;
export const MAX_DOMAIN_FILTERS = 100;
/**
 * The most an answer holds: rows of `data`, and values (rows × metrics asked). A Lambda answer
 * may not pass 6 MB; at these bounds it stays under 5 MB with the longest domain names
 * (test/unit/email-metrics-query.test.ts measures it). Above them the query is a 400 that says
 * what to narrow.
 */
export const MAX_ANSWER_ROWS = 5_000;
export const MAX_ANSWER_VALUES = 100_000;
/** Counter items live this long after their hour: the longest range, and a margin. */
export const METRIC_RETENTION_DAYS = MAX_RANGE_DAYS + 10;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

const isZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** A comma-separated query value (API Gateway joins a repeated parameter with commas too). */
const commaList = <T extends string>(field: string, allowed: readonly T[], refuse: Record<string, string>) =>
  z.optional(
    documented(
      z.pipe(
        z.string(),
        z.transform((value: string, ctx) => {
          const items = [
            ...new Set(
              value
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
            ),
          ];
          for (const item of items) {
            const why = refuse[item];
            if (why || !allowed.includes(item as T))
              ctx.issues.push({
                code: 'custom',
                input: value,
                message: why ?? `${field} must be among ${allowed.join(', ')}; got ${item}`,
              });
          }
          return items as T[];
        }),
      ),
      {
        type: 'array',
        items: { type: 'string', enum: [...allowed] },
        description: `${field}, comma-separated`,
      },
    ),
  );

/**
 * What the OpenAPI document says a parameter is (metadata only: the query string's text is what is
 * read); a list as Resend describes it: an array, sent comma-separated (`style: form, explode: false`).
 */
function documented<S extends z.ZodMiniType>(schema: S, meta: GlobalMeta): S {
  z.globalRegistry.add(schema, meta);
  return schema;
}

const notSupported = (why: string, names: readonly string[]) =>
  Object.fromEntries(names.map((name) => [name, `${name} is not supported: ${why}`]));

/** A date of the calendar (2026-02-30 is none, though Date.parse reads it as 2 March) and a time of day. */
const isCalendarDate = (s: string) => {
  const [y, m, d] = s.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return false;
  const time = /T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(s);
  return !time || (Number(time[1]) < 24 && Number(time[2]) < 60 && Number(time[3] ?? 0) < 60);
};

const dateField = (field: string, description: string) =>
  z.optional(
    documented(
      z
        .string()
        .check(
          z.refine(
            (s) => (DATE.test(s) || DATETIME.test(s)) && isCalendarDate(s) && !Number.isNaN(Date.parse(s)),
            `${field} must be an ISO 8601 date (2026-07-01) or datetime (2026-07-01T12:00:00Z)`,
          ),
        ),
      {
        description,
        pattern: `${DATE.source}|${DATETIME.source}`,
        examples: ['2026-07-01', '2026-07-01T12:00:00Z'],
      },
    ),
  );

/**
 * The query of `GET /v1/emails/metrics` as the official SDK sends it (comma-joined lists). What it
 * yields still needs the clock: resolveMetricsQuery fills the defaults and checks the range.
 */
export const emailMetricsQuerySchema = z.strictObject({
  start_date: dateField(
    'start_date',
    'The start of the range: an ISO 8601 date (midnight in `timezone`) or datetime (without an offset, UTC). On or before `end_date`, at most 90 days before it. Defaults to 6 days before `end_date`.',
  ),
  end_date: dateField(
    'end_date',
    'The end of the range: an ISO 8601 date (the end of that day in `timezone`) or datetime (without an offset, UTC). A time in the future counts as now. Defaults to now.',
  ),
  timezone: z.optional(
    documented(
      z
        .string()
        .check(z.refine(isZone, 'timezone must be an IANA time zone name, such as UTC or America/New_York')),
      {
        description:
          'An IANA time zone name: days, weeks and months begin at midnight there, and date-only bounds are read there.',
        default: 'UTC',
        examples: ['UTC', 'America/New_York'],
      },
    ),
  ),
  granularity: z.optional(
    documented(
      z.pipe(
        z.enum([...GRANULARITIES, 'hour', 'day', 'week', 'month'], {
          error: `granularity must be one of ${GRANULARITIES.join(', ')} (or hour, day, week, month)`,
        }),
        z.transform((g): Granularity => GRANULARITY_ALIASES[g] ?? (g as Granularity)),
      ),
      {
        type: 'string',
        enum: [...GRANULARITIES, 'hour', 'day', 'week', 'month'],
        default: 'daily',
        description:
          'The bucket size of `period`; `hour`, `day`, `week`, `month` are the same as `hourly`, `daily`, `weekly`, `monthly` (the answer names the latter)',
      },
    ),
  ),
  metrics: commaList<MetricName>(
    'metrics',
    SUPPORTED_METRICS,
    notSupported('this service receives no email and keeps no unsubscribes', UNSUPPORTED_METRICS),
  ),
  dimensions: commaList<Dimension>('dimensions', SUPPORTED_DIMENSIONS, {
    ...notSupported('counts are kept per sender domain and hour, not per email', ['email']),
    ...notSupported('this service has no broadcasts', ['broadcast']),
  }),
  domain_id: z.optional(
    documented(
      z.pipe(
        z.string(),
        z.transform((value: string, ctx) => {
          const ids = [
            ...new Set(
              value
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
            ),
          ];
          if (ids.length > MAX_DOMAIN_FILTERS)
            ctx.issues.push({
              code: 'custom',
              input: value,
              message: `domain_id takes at most ${MAX_DOMAIN_FILTERS} ids`,
            });
          else {
            // Checked before any read: a key DynamoDB cannot take (too long) would be a 500.
            const bad = ids.filter((id) => !isId(DOMAIN_ID_PREFIX, id));
            if (bad.length)
              ctx.issues.push({
                code: 'custom',
                input: value,
                message: `domain_id must be domain ids (dom_…); not: ${bad
                  .slice(0, 3)
                  .map((id) => (id.length > 40 ? `${id.slice(0, 40)}…` : id))
                  .join(', ')}${bad.length > 3 ? ', …' : ''}`,
              });
          }
          return ids;
        }),
      ),
      {
        type: 'array',
        items: { type: 'string', pattern: idPattern(DOMAIN_ID_PREFIX) },
        maxItems: MAX_DOMAIN_FILTERS,
        description: 'domain ids, comma-separated',
      },
    ),
  ),
  email_id: z.optional(
    z.never({
      error: 'email_id is not supported: counts are kept per sender domain and hour, not per email',
    }),
  ),
  broadcast_id: z.optional(
    z.never({ error: 'broadcast_id is not supported: this service has no broadcasts' }),
  ),
});
export type EmailMetricsQueryInput = z.output<typeof emailMetricsQuerySchema>;

/** A query with its defaults filled and its range checked. */
export interface MetricsQuery {
  startMs: number;
  endMs: number;
  timezone: string;
  granularity: Granularity;
  metrics: MetricName[];
  dimensions: Dimension[];
  domainIds: string[];
}

/**
 * Fills what the query leaves out as Resend documents it (end: now; start: 6 days before the end;
 * daily; UTC; every metric this service counts) and checks the range: an end in the future is
 * clamped to now, the start must not be after the end, and the range may span at most 90 days. A
 * date without a time is that day's midnight in the query's time zone (for `end_date`, the end of
 * that day).
 */
export function resolveMetricsQuery(input: EmailMetricsQueryInput, nowMs: number): MetricsQuery {
  const timezone = input.timezone ?? 'UTC';
  const endMs = Math.min(
    nowMs,
    input.end_date === undefined ? nowMs : instantOf(input.end_date, timezone, 'end'),
  );
  const startMs =
    input.start_date === undefined
      ? endMs - DEFAULT_RANGE_DAYS * DAY_MS
      : instantOf(input.start_date, timezone);
  if (startMs > endMs)
    throw validationError('start_date must be on or before end_date (an end in the future counts as now)', [
      { field: 'start_date', message: 'must be on or before end_date' },
    ]);
  if (endMs - startMs > MAX_RANGE_DAYS * DAY_MS)
    throw validationError(`The date range may span at most ${MAX_RANGE_DAYS} days`, [
      { field: 'start_date', message: `must be at most ${MAX_RANGE_DAYS} days before end_date` },
    ]);
  return {
    startMs,
    endMs,
    timezone,
    granularity: input.granularity ?? 'daily',
    metrics: input.metrics?.length ? input.metrics : [...SUPPORTED_METRICS],
    dimensions: input.dimensions ?? [],
    domainIds: input.domain_id ?? [],
  };
}

/** The instant a query date names: a datetime as given (UTC without an offset), a date in `zone`. */
function instantOf(text: string, zone: string, edge: 'start' | 'end' = 'start'): number {
  if (!DATE.test(text)) return Date.parse(/[Zz]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`);
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  const midnight = instantIn(Date.UTC(y, m - 1, d + (edge === 'end' ? 1 : 0)), zone);
  return edge === 'end' ? midnight - 1 : midnight;
}

/**
 * The period an hour of counts falls in: the instant its period starts (an ISO datetime in UTC),
 * by the wall clock of `zone`. Counts are kept by UTC hour, so in a zone whose offset is not whole
 * hours (India, +05:30) a daily period takes the hours that start in its day.
 */
export function periodOf(hourMs: number, granularity: Granularity, zone: string): string {
  if (granularity === 'hourly') return new Date(hourMs).toISOString();
  const offset = zoneOffsetMs(hourMs, zone);
  const wall = new Date(hourMs + offset);
  const y = wall.getUTCFullYear();
  const m = wall.getUTCMonth();
  let d = wall.getUTCDate();
  if (granularity === 'monthly') d = 1;
  // ISO weeks start on Monday.
  if (granularity === 'weekly') d -= (wall.getUTCDay() + 6) % 7;
  return new Date(instantIn(Date.UTC(y, m, d), zone)).toISOString();
}

/** The UTC hours a range touches (counts are kept by hour: an hour counts whole if it is in range). */
export function hoursOf(startMs: number, endMs: number): number[] {
  const hours: number[] = [];
  for (let h = Math.floor(startMs / HOUR_MS) * HOUR_MS; h <= endMs; h += HOUR_MS) hours.push(h);
  return hours;
}

/**
 * Thrown by a MetricsReader when more of the range than it reads at once is not rolled up yet (the
 * sweep that rolls hours up has not run for a while): answered as a 503, to retry once it caught up.
 */
export class MetricsBehindError extends Error {
  constructor(
    readonly hoursBehind: number,
    readonly maxHours: number,
  ) {
    super(`${hoursBehind} hours of counts are not rolled up yet; at most ${maxHours} are read unrolled`);
    this.name = 'MetricsBehindError';
  }
}

/** Counts of one sender domain in one UTC hour, as the store keeps them. */
export interface HourCounts {
  hourMs: number;
  domain: string;
  counts: MetricCounts;
}

/** A domain as the answer names it: its id, when it is still one of the account's domains. */
export interface KnownDomain {
  id: string;
  name: string;
}

type Row = Record<string, string | number>;

export interface EmailMetricsBody {
  object: 'metrics';
  start_date: string;
  end_date: string;
  metrics: MetricName[];
  dimensions: Dimension[];
  granularity: Granularity;
  totals: Record<string, number>;
  data?: Row[];
}

/** The asked metrics of summed counts: counts as they are, rates from them. */
function valuesOf(sum: MetricCounts, metrics: readonly MetricName[]): Record<string, number> {
  const values: Record<string, number> = {};
  for (const metric of metrics) {
    if (metric in RATES) {
      const [numerator, denominator] = RATES[metric as Rate];
      const below = sum[denominator] ?? 0;
      values[metric] = below === 0 ? 0 : Math.round(((sum[numerator] ?? 0) / below) * 10_000) / 10_000;
    } else values[metric] = sum[metric as CountedMetric] ?? 0;
  }
  return values;
}

const add = (into: MetricCounts, counts: MetricCounts) => {
  for (const [name, value] of Object.entries(counts) as [CountedMetric, number][])
    into[name] = (into[name] ?? 0) + value;
};

/**
 * The answer: totals over the range and, with dimensions, one row per period (every period of the
 * range, empty ones too) and/or per sender domain (those with counts, and those filtered on).
 * `domains` are the account's domains by name; `only` restricts the counts to these names.
 */
export function metricsAnswer(
  query: MetricsQuery,
  hours: readonly HourCounts[],
  domains: ReadonlyMap<string, KnownDomain>,
  only?: ReadonlySet<string>,
): EmailMetricsBody {
  const inRange = hours.filter((h) => !only || only.has(h.domain));
  const totals: MetricCounts = {};
  for (const h of inRange) add(totals, h.counts);
  const body: EmailMetricsBody = {
    object: 'metrics',
    start_date: new Date(query.startMs).toISOString(),
    end_date: new Date(query.endMs).toISOString(),
    metrics: query.metrics,
    dimensions: query.dimensions,
    granularity: query.granularity,
    totals: valuesOf(totals, query.metrics),
  };
  if (query.dimensions.length === 0) return body;

  const byPeriod = query.dimensions.includes('period');
  const byDomain = query.dimensions.includes('domain');
  const periods = byPeriod
    ? [
        ...new Set(
          hoursOf(query.startMs, query.endMs).map((h) => periodOf(h, query.granularity, query.timezone)),
        ),
      ]
    : [''];
  const domainNames = byDomain
    ? [...new Set([...(only ?? []), ...inRange.map((h) => h.domain)])].sort()
    : [''];
  const rows = periods.length * domainNames.length;
  const values = rows * query.metrics.length;
  if (rows > MAX_ANSWER_ROWS || values > MAX_ANSWER_VALUES)
    throw validationError(
      `This answer would hold ${rows.toLocaleString('en-US')} rows and ${values.toLocaleString('en-US')} values; ` +
        `at most ${MAX_ANSWER_ROWS.toLocaleString('en-US')} rows and ${MAX_ANSWER_VALUES.toLocaleString('en-US')} values (rows × metrics) are answered: ` +
        'narrow the range, take a coarser granularity, ask for fewer metrics or dimensions, or filter by domain_id',
      [
        {
          field: 'dimensions',
          message: `the answer would have ${rows} rows of ${query.metrics.length} metrics`,
        },
      ],
    );
  const sums = new Map<string, MetricCounts>();
  const keyOf = (period: string, domain: string) => `${period}|${domain}`;
  for (const h of inRange) {
    const key = keyOf(
      byPeriod ? periodOf(h.hourMs, query.granularity, query.timezone) : '',
      byDomain ? h.domain : '',
    );
    const sum = sums.get(key) ?? {};
    add(sum, h.counts);
    sums.set(key, sum);
  }
  body.data = [];
  for (const period of periods)
    for (const name of domainNames) {
      const row: Row = {};
      if (byPeriod) row.period = period;
      if (byDomain) {
        const known = domains.get(name);
        if (known) row.domain_id = known.id;
        row.domain_name = name;
      }
      body.data.push({ ...row, ...valuesOf(sums.get(keyOf(period, name)) ?? {}, query.metrics) });
    }
  return body;
}

/** The sender domain counts are kept under: the domain of the `From` address, lowercased. */
export function senderDomainOf(from: string | undefined): string | undefined {
  if (!from) return undefined;
  const parsed = parseAddress(from);
  const email = 'error' in parsed ? (from.includes('@') ? from.trim() : undefined) : parsed.email;
  return email ? domainOf(email) : undefined;
}

/** The answer's shape (for the OpenAPI document): Resend's `GetEmailsMetricsResponse`. */
export const emailMetricsRowSchema = z.catchall(
  z.object({
    period: z.optional(z.string()),
    domain_id: z.optional(z.string()),
    domain_name: z.optional(z.string()),
  }),
  z.number(),
);
export const emailMetricsResponseSchema = z.object({
  object: z.literal('metrics'),
  start_date: z.string(),
  end_date: z.string(),
  metrics: z.array(z.enum(SUPPORTED_METRICS)),
  dimensions: z.array(z.enum(RESEND_DIMENSIONS)),
  granularity: z.enum(GRANULARITIES),
  totals: z.record(z.string(), z.number()),
  data: z.optional(z.array(emailMetricsRowSchema)),
});
