import * as z from 'zod/mini';
import type { GlobalMeta } from 'zod/v4/core';
import { validationError } from '../shared/errors.js';
import { DOMAIN_ID_PREFIX, idPattern, isId, isUuid } from '../shared/ids.js';
import { instantIn } from '../shared/time-zones.js';
import {
  DAY_MS,
  DEFAULT_RANGE_DAYS,
  type Dimension,
  GRANULARITIES,
  GRANULARITY_ALIASES,
  type Granularity,
  MAX_BROADCAST_FILTERS,
  MAX_DOMAIN_FILTERS,
  MAX_RANGE_DAYS,
  type MetricName,
  type MetricsQuery,
  SUPPORTED_DIMENSIONS,
  SUPPORTED_METRICS,
} from './model.js';

/**
 * `GET /v1/emails/metrics`' query, in Resend's terms: the schema its handler validates with, and
 * the query resolved (defaults filled, the range checked) for the read (read.ts).
 */

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

/**
 * A list of ids, comma-separated (the SDK joins its array with commas), at most `max`, each of the
 * shape `isShaped` checks: checked before any read, as a key DynamoDB cannot take (too long) would
 * be a 500.
 */
const idList = (
  field: string,
  what: string,
  max: number,
  isShaped: (id: string) => boolean,
  items: Record<string, string>,
) =>
  z.optional(
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
          if (ids.length > max)
            ctx.issues.push({ code: 'custom', input: value, message: `${field} takes at most ${max} ids` });
          else {
            const bad = ids.filter((id) => !isShaped(id));
            if (bad.length)
              ctx.issues.push({
                code: 'custom',
                input: value,
                message: `${field} must be ${what}; not: ${bad
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
        items: { type: 'string', ...items },
        maxItems: max,
        description: `${what.replace(/ \(.*\)$/, '')}, comma-separated`,
      },
    ),
  );

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
  metrics: commaList<MetricName>('metrics', SUPPORTED_METRICS, {}),
  dimensions: commaList<Dimension>('dimensions', SUPPORTED_DIMENSIONS, {
    ...notSupported('counts are kept per sender domain and hour, not per email', ['email']),
  }),
  domain_id: idList(
    'domain_id',
    'domain ids (dom_…)',
    MAX_DOMAIN_FILTERS,
    (id) => isId(DOMAIN_ID_PREFIX, id),
    {
      pattern: idPattern(DOMAIN_ID_PREFIX),
    },
  ),
  email_id: z.optional(
    z.never({
      error: 'email_id is not supported: counts are kept per sender domain and hour, not per email',
    }),
  ),
  broadcast_id: idList('broadcast_id', 'broadcast ids (UUIDs)', MAX_BROADCAST_FILTERS, isUuid, {
    format: 'uuid',
  }),
});
export type EmailMetricsQueryInput = z.output<typeof emailMetricsQuerySchema>;

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
    broadcastIds: input.broadcast_id ?? [],
  };
}

/** The instant a query date names: a datetime as given (UTC without an offset), a date in `zone`. */
function instantOf(text: string, zone: string, edge: 'start' | 'end' = 'start'): number {
  if (!DATE.test(text)) return Date.parse(/[Zz]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`);
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  const midnight = instantIn(Date.UTC(y, m - 1, d + (edge === 'end' ? 1 : 0)), zone);
  return edge === 'end' ? midnight - 1 : midnight;
}
