import { useState } from 'preact/hooks';
import type { EmailMetrics, MetricName } from '../answers.js';
import { api, query } from '../api.js';
import { Empty, ErrorNote, Loading, PageHeading, useLoad } from '../components.js';
import { Table } from '../list.js';
import { MetricsCharts } from './overview-charts.js';
import { UsageCard } from './usage-card.js';

/** The metrics the page asks for, by the service's names. */
const METRICS = [
  'sent',
  'delivered',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'bounce_rate',
  'complaint_rate',
] as const satisfies readonly MetricName[];
type Counts = Record<(typeof METRICS)[number], number>;
/**
 * The answer, with the metrics asked for: its schema holds whichever metrics and dimensions a query
 * names, and this one asks for these, by day.
 */
type Metrics = Omit<EmailMetrics, 'totals' | 'data'> & {
  totals: Counts;
  data?: (NonNullable<EmailMetrics['data']>[number] & Counts & { period: string })[];
};
/** The rates above which SES reviews an account (and may pause its sending). */
const BOUNCE_REVIEW = 0.05;
const COMPLAINT_REVIEW = 0.001;

const percent = (rate: number) => `${(rate * 100).toFixed(rate < 0.01 && rate > 0 ? 2 : 1)} %`;
const day = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});

export function OverviewPage() {
  const [days, setDays] = useState(7);
  const metrics = useLoad(() => {
    const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
    return api<Metrics>(
      `/v1/emails/metrics${query({ start_date: start, granularity: 'daily', dimensions: 'period', metrics: METRICS.join(',') })}`,
      { what: 'the metrics' },
    );
  }, [days]);
  const totals = metrics.data?.totals;
  const rows = metrics.data?.data ?? [];
  const busiest = Math.max(1, ...rows.map((r) => r.sent));
  return (
    <>
      <PageHeading>Overview</PageHeading>
      <UsageCard />
      <div class="toolbar">
        <div>
          <label for="range">Range</label>
          <select
            id="range"
            value={days}
            onChange={(e) => setDays(Number((e.currentTarget as HTMLSelectElement).value))}
          >
            <option value={7}>Last 7 days</option>
            <option value={30}>Last 30 days</option>
          </select>
        </div>
      </div>
      <ErrorNote error={metrics.error} />
      {!totals && metrics.loading && <Loading />}
      {totals && (
        <>
          <div class="cards">
            <Card label="Sent" value={totals.sent.toLocaleString()} />
            <Card label="Delivered" value={totals.delivered.toLocaleString()} />
            <Card
              label="Bounce rate"
              value={percent(totals.bounce_rate)}
              over={totals.bounce_rate > BOUNCE_REVIEW}
              note={`SES reviews accounts above ${percent(BOUNCE_REVIEW)}`}
            />
            <Card
              label="Complaint rate"
              value={percent(totals.complaint_rate)}
              over={totals.complaint_rate > COMPLAINT_REVIEW}
              note={`SES reviews accounts above ${percent(COMPLAINT_REVIEW)}`}
            />
            <Card label="Opened" value={totals.opened.toLocaleString()} />
            <Card label="Clicked" value={totals.clicked.toLocaleString()} />
          </div>
          {totals.sent === 0 ? (
            <Empty title="No email sent in this range.">
              <p>
                Add a sending domain under <a href="#/domains">Domains</a>, then send with{' '}
                <code>POST /v1/emails</code> (see <a href="/docs">the API reference</a>).
              </p>
            </Empty>
          ) : null}
          <MetricsCharts days={days} />
          <h2>By day</h2>
          <Table
            caption="Days in UTC"
            captionClass="muted"
            columns={[
              'Day',
              { label: 'Sent', class: 'num' },
              { label: 'Sent, as a bar', hidden: true },
              { label: 'Delivered', class: 'num' },
              { label: 'Bounce rate', class: 'num' },
              { label: 'Complaint rate', class: 'num' },
              { label: 'Opened', class: 'num' },
              { label: 'Clicked', class: 'num' },
            ]}
          >
            {rows.map((row) => (
              <tr key={row.period}>
                <th scope="row">{day.format(new Date(row.period))}</th>
                <td class="num">{row.sent}</td>
                <td>
                  <progress class="bar" max={busiest} value={row.sent} aria-label={`${row.sent} sent`} />
                </td>
                <td class="num">{row.delivered}</td>
                <td class={`num${row.bounce_rate > BOUNCE_REVIEW ? ' over' : ''}`}>
                  {percent(row.bounce_rate)}
                </td>
                <td class={`num${row.complaint_rate > COMPLAINT_REVIEW ? ' over' : ''}`}>
                  {percent(row.complaint_rate)}
                </td>
                <td class="num">{row.opened}</td>
                <td class="num">{row.clicked}</td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </>
  );
}

function Card({ label, value, note, over }: { label: string; value: string; note?: string; over?: boolean }) {
  return (
    <div class={`card${over ? ' over' : ''}`}>
      <div class="muted">{label}</div>
      <div class="value">{value}</div>
      {note && (
        <p class="note">
          {over ? 'Over the line: ' : ''}
          {note}
        </p>
      )}
    </div>
  );
}
