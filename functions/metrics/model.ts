import { domainOf, parseAddress } from '../shared/address.js';
import { validationError } from '../shared/errors.js';
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
  'received',
  /** Opt-outs through an email's unsubscribe link (a topic, or every email), under the email's sender domain. */
  'unsubscribed',
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
  unsubscribe_rate: ['unsubscribed', 'delivered'],
} as const satisfies Record<string, readonly [CountedMetric, CountedMetric]>;
type Rate = keyof typeof RATES;

export const SUPPORTED_METRICS = [...COUNTED_METRICS, ...(Object.keys(RATES) as Rate[])] as const;
export type MetricName = CountedMetric | Rate;

export const RESEND_DIMENSIONS = ['period', 'domain', 'email', 'broadcast'] as const;
export const SUPPORTED_DIMENSIONS = ['period', 'domain', 'broadcast'] as const;
export type Dimension = (typeof SUPPORTED_DIMENSIONS)[number];
export const GRANULARITIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const GRANULARITY_ALIASES: Record<string, Granularity> = {
  hour: 'hourly',
  day: 'daily',
  week: 'weekly',
  month: 'monthly',
};

export const MAX_RANGE_DAYS = 90;
export const DEFAULT_RANGE_DAYS = 6;
export const MAX_DOMAIN_FILTERS = 100;
export const MAX_BROADCAST_FILTERS = 100;
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

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** A query with its defaults filled and its range checked. */
export interface MetricsQuery {
  startMs: number;
  endMs: number;
  timezone: string;
  granularity: Granularity;
  metrics: MetricName[];
  dimensions: Dimension[];
  domainIds: string[];
  /** Only these broadcasts' emails (`broadcast_id`); empty: no such filter. */
  broadcastIds: string[];
}

/**
 * Whether the query is about broadcasts (the `broadcast` dimension or the `broadcast_id` filter):
 * then only broadcast emails are counted, totals included, so the rows add up to the totals.
 */
export const byBroadcast = (query: Pick<MetricsQuery, 'dimensions' | 'broadcastIds'>) =>
  query.dimensions.includes('broadcast') || query.broadcastIds.length > 0;

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

/**
 * Counts of one sender domain in one UTC hour, as the store keeps them: of all its emails, or (read
 * by broadcast: MetricsReader.hours' `broadcasts`) of one broadcast's emails.
 */
export interface HourCounts {
  hourMs: number;
  domain: string;
  broadcastId?: string;
  counts: MetricCounts;
}

/** A domain as the answer names it: its id, when it is still one of the account's domains. */
export interface KnownDomain {
  id: string;
  name: string;
}

/** What the answer says of each dimension's values besides the counts. */
export interface AnswerNames {
  /** The account's domains by name (a row by domain gives the id). */
  domains: ReadonlyMap<string, KnownDomain>;
  /** Broadcasts' names by id (a row by broadcast gives the name, when the broadcast is still there). */
  broadcasts?: ReadonlyMap<string, string>;
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
 * range, empty ones too) and/or per group: a sender domain (those with counts, and those filtered
 * on), a broadcast (likewise), or with both a (domain, broadcast) pair with counts. `domains` are
 * the account's domains by name; `only` restricts the counts to these names; `broadcasts` names the
 * broadcasts by id. A query about broadcasts (byBroadcast) is answered from `hours` read by
 * broadcast: only broadcast emails, those of `query.broadcastIds` when given.
 */
export function metricsAnswer(
  query: MetricsQuery,
  hours: readonly HourCounts[],
  domains: ReadonlyMap<string, KnownDomain>,
  only?: ReadonlySet<string>,
  broadcasts: ReadonlyMap<string, string> = new Map(),
): EmailMetricsBody {
  const aboutBroadcasts = byBroadcast(query);
  const wanted = query.broadcastIds.length ? new Set(query.broadcastIds) : undefined;
  const inRange = hours.filter(
    (h) =>
      (!only || only.has(h.domain)) &&
      (!aboutBroadcasts || (h.broadcastId !== undefined && (!wanted || wanted.has(h.broadcastId)))),
  );
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
  const byCampaign = query.dimensions.includes('broadcast');
  const periods = byPeriod
    ? [
        ...new Set(
          hoursOf(query.startMs, query.endMs).map((h) => periodOf(h, query.granularity, query.timezone)),
        ),
      ]
    : [''];
  const groupOf = (h: Pick<HourCounts, 'domain' | 'broadcastId'>) =>
    `${byDomain ? h.domain : ''}\n${byCampaign ? (h.broadcastId ?? '') : ''}`;
  const groups = groupsOf(query, inRange, only, broadcasts, groupOf);
  const rows = periods.length * groups.length;
  const values = rows * query.metrics.length;
  if (rows > MAX_ANSWER_ROWS || values > MAX_ANSWER_VALUES)
    throw validationError(
      `This answer would hold ${rows.toLocaleString('en-US')} rows and ${values.toLocaleString('en-US')} values; ` +
        `at most ${MAX_ANSWER_ROWS.toLocaleString('en-US')} rows and ${MAX_ANSWER_VALUES.toLocaleString('en-US')} values (rows × metrics) are answered: ` +
        'narrow the range, take a coarser granularity, ask for fewer metrics or dimensions, or filter by domain_id or broadcast_id',
      [
        {
          field: 'dimensions',
          message: `the answer would have ${rows} rows of ${query.metrics.length} metrics`,
        },
      ],
    );
  const sums = new Map<string, MetricCounts>();
  for (const h of inRange) {
    const key = `${byPeriod ? periodOf(h.hourMs, query.granularity, query.timezone) : ''}|${groupOf(h)}`;
    const sum = sums.get(key) ?? {};
    add(sum, h.counts);
    sums.set(key, sum);
  }
  body.data = [];
  for (const period of periods)
    for (const group of groups) {
      const row: Row = {};
      if (byPeriod) row.period = period;
      if (byDomain) {
        const known = domains.get(group.domain);
        if (known) row.domain_id = known.id;
        row.domain_name = group.domain;
      }
      if (byCampaign) {
        row.broadcast_id = group.broadcastId;
        const name = broadcasts.get(group.broadcastId);
        if (name !== undefined) row.broadcast_name = name;
      }
      body.data.push({ ...row, ...valuesOf(sums.get(`${period}|${group.key}`) ?? {}, query.metrics) });
    }
  return body;
}

interface Group {
  key: string;
  domain: string;
  broadcastId: string;
}

/**
 * The rows of each period: by domain, the domains with counts and those filtered on (sorted); by
 * broadcast, the broadcasts with counts and those filtered on (by name, then id); by both, the
 * pairs with counts; by neither (period only), one.
 */
function groupsOf(
  query: MetricsQuery,
  inRange: readonly HourCounts[],
  only: ReadonlySet<string> | undefined,
  broadcasts: ReadonlyMap<string, string>,
  groupOf: (h: Pick<HourCounts, 'domain' | 'broadcastId'>) => string,
): Group[] {
  const byDomain = query.dimensions.includes('domain');
  const byCampaign = query.dimensions.includes('broadcast');
  const found = new Map<string, Group>();
  const put = (domain: string, broadcastId: string) => {
    const key = groupOf({ domain, broadcastId });
    if (!found.has(key))
      found.set(key, { key, domain: byDomain ? domain : '', broadcastId: byCampaign ? broadcastId : '' });
  };
  for (const h of inRange) put(h.domain, h.broadcastId ?? '');
  if (byDomain && !byCampaign) for (const name of only ?? []) put(name, '');
  if (byCampaign && !byDomain) for (const id of query.broadcastIds) put('', id);
  if (found.size === 0 && !byDomain && !byCampaign) put('', '');
  const nameOf = (id: string) => broadcasts.get(id) ?? '';
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...found.values()].sort(
    (a, b) =>
      order(a.domain, b.domain) ||
      order(nameOf(a.broadcastId), nameOf(b.broadcastId)) ||
      order(a.broadcastId, b.broadcastId),
  );
}

/** The sender domain counts are kept under: the domain of the `From` address, lowercased. */
export function senderDomainOf(from: string | undefined): string | undefined {
  if (!from) return undefined;
  const parsed = parseAddress(from);
  const email = 'error' in parsed ? (from.includes('@') ? from.trim() : undefined) : parsed.email;
  return email ? domainOf(email) : undefined;
}
