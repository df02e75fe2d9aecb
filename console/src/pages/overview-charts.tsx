import { useEffect, useState } from 'preact/hooks';
import type { EmailMetrics, Granularity, MetricName } from '../answers.js';
import { api, query } from '../api.js';
import { GroupedBars, LineChart, type Series } from '../charts.js';
import { ErrorNote, Loading, useLoad } from '../components.js';
import { useQuery } from '../router.js';

/** What the charts draw, in this order, each with its colour (AA on white) and dash. */
const CHARTED = [
  'sent',
  'delivered',
  'bounced',
  'opened',
  'clicked',
] as const satisfies readonly MetricName[];
type Charted = (typeof CHARTED)[number];
const LOOK: Record<Charted, { label: string; color: string; dash: string }> = {
  sent: { label: 'Sent', color: '#0b57d0', dash: '' },
  delivered: { label: 'Delivered', color: '#0f6b36', dash: '6 3' },
  bounced: { label: 'Bounced', color: '#a4161a', dash: '2 3' },
  opened: { label: 'Opened', color: '#8a4b00', dash: '10 3 2 3' },
  clicked: { label: 'Clicked', color: '#6b3fa0', dash: '1 0' },
};
/** The granularities offered, the first the default (`#/?by=hourly` for the other). */
const POINTS = ['daily', 'hourly'] as const satisfies readonly Granularity[];
const POINT_LABELS: Record<(typeof POINTS)[number], string> = { daily: 'By day', hourly: 'By hour' };
/** A chart whose request failed is asked again after this long (doubling after each failure). */
const RETRY_MS = 5000;
/** The most domains drawn; the rest are counted in a note. */
const MAX_DOMAINS = 10;

type Row = Record<Charted, number> & { period?: string; domain_name?: string };
type Answer = Omit<EmailMetrics, 'data'> & { data?: Row[] };

const dayLabel = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const dayLong = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});
const hourLabel = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
});

const load = (days: number, params: Record<string, string>) => {
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  return api<Answer>(
    `/v1/emails/metrics${query({ start_date: start, metrics: CHARTED.join(','), ...params })}`,
    { what: 'the metrics' },
  );
};

const summary = (values: Record<Charted, number>) =>
  CHARTED.map((m) => `${values[m].toLocaleString()} ${m}`).join(', ');

/**
 * The overview's charts of `GET /v1/emails/metrics`: sent, delivered, bounced, opened and clicked
 * over the range by day or by hour (kept in the URL, `#/?by=hourly`), and by sender domain. Two
 * requests: one by period, one by domain; not refreshed while open (the overview is not), only
 * asked again after a failure.
 */
export function MetricsCharts({ days }: { days: number }) {
  const [params, setParams] = useQuery();
  const hourly = params.by === 'hourly';
  // Asked once; asked again only after a failure (5 s, then doubling up to a minute, until an answer).
  const [periodFailed, setPeriodFailed] = useState(false);
  const [domainFailed, setDomainFailed] = useState(false);
  const byPeriod = useLoad(
    () => load(days, { granularity: hourly ? 'hourly' : 'daily', dimensions: 'period' }),
    [days, hourly],
    periodFailed ? RETRY_MS : undefined,
  );
  const byDomain = useLoad(
    () => load(days, { granularity: 'daily', dimensions: 'domain' }),
    [days],
    domainFailed ? RETRY_MS : undefined,
  );
  useEffect(() => setPeriodFailed(!!byPeriod.error), [byPeriod.error]);
  useEffect(() => setDomainFailed(!!byDomain.error), [byDomain.error]);
  const range = `the last ${days} days`;
  const rows = byPeriod.data?.data ?? [];
  const series: Series[] = CHARTED.map((m) => ({ ...LOOK[m], values: rows.map((r) => r[m] ?? 0) }));
  const domains = (byDomain.data?.data ?? [])
    .filter((r) => CHARTED.some((m) => (r[m] ?? 0) > 0))
    .sort(
      (a, b) => (b.sent ?? 0) - (a.sent ?? 0) || String(a.domain_name).localeCompare(String(b.domain_name)),
    );
  const shown = domains.slice(0, MAX_DOMAINS);
  return (
    <section class="overview-charts" aria-labelledby="charts-heading">
      <div class="charts-toolbar">
        <h2 id="charts-heading">Over time</h2>
        <div>
          <label for="chart-granularity">Points</label>
          <select
            id="chart-granularity"
            value={hourly ? 'hourly' : 'daily'}
            onChange={(e) => {
              const by = (e.currentTarget as HTMLSelectElement).value;
              setParams({ ...params, by: by === POINTS[0] ? undefined : by });
            }}
          >
            {POINTS.map((by) => (
              <option key={by} value={by}>
                {POINT_LABELS[by]}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorNote error={byPeriod.error} />
      {!byPeriod.data && byPeriod.loading && <Loading />}
      {byPeriod.data && (
        <LineChart
          id="chart-time"
          title={`Sent, delivered, bounced, opened and clicked ${hourly ? 'by hour' : 'by day'}, UTC`}
          description={`Over ${range}: ${summary(byPeriod.data.totals as Record<Charted, number>)}.`}
          periods={rows.map((r) => r.period ?? '')}
          series={series}
          labelOf={(period, short) => {
            const at = new Date(period);
            if (hourly) return `${hourLabel.format(at)}${short ? '' : ' UTC'}`;
            return short ? dayLabel.format(at) : dayLong.format(at);
          }}
        />
      )}
      <h2>By sender domain</h2>
      <ErrorNote error={byDomain.error} />
      {!byDomain.data && byDomain.loading && <Loading />}
      {byDomain.data &&
        (shown.length === 0 ? (
          <p class="muted">No domain sent email in {range}.</p>
        ) : (
          <>
            <GroupedBars
              id="chart-domains"
              title="Sent, delivered, bounced, opened and clicked by sender domain"
              description={`Over ${range}: ${shown.map((d) => `${d.domain_name}: ${summary(d)}`).join('; ')}.`}
              groups={shown.map((d) => ({
                name: d.domain_name ?? '',
                values: CHARTED.map((m) => d[m] ?? 0),
              }))}
              series={CHARTED.map((m) => ({ ...LOOK[m], dash: '' }))}
            />
            {domains.length > shown.length && (
              <p class="muted">
                The {MAX_DOMAINS} domains that sent the most; {domains.length - shown.length} more sent less.
              </p>
            )}
          </>
        ))}
    </section>
  );
}
