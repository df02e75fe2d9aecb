import type { DocsOf } from '../shared/route.js';
import type { METRICS_ROUTES } from './routes.js';

/** The metrics' route in the OpenAPI document: its words and example (routes.ts declares it). */
export const METRICS_DOCS: DocsOf<typeof METRICS_ROUTES> = {
  'get-email-metrics': {
    ok: "Counts and rates over the range, in Resend's shape: `totals`, and with `dimensions` a row per period, domain and/or broadcast.",
    example: {
      object: 'metrics',
      start_date: '2026-11-16T00:00:00.000Z',
      end_date: '2026-11-22T03:29:55.214Z',
      metrics: ['sent', 'delivered', 'bounced', 'bounce_rate'],
      dimensions: ['period'],
      granularity: 'daily',
      totals: { sent: 1200, delivered: 1188, bounced: 6, bounce_rate: 0.005 },
      data: [
        { period: '2026-11-21', sent: 700, delivered: 694, bounced: 4, bounce_rate: 0.0057 },
        { period: '2026-11-22', sent: 500, delivered: 494, bounced: 2, bounce_rate: 0.004 },
      ],
    },
    description:
      'Counted as events are recorded (each once, duplicated or reordered SES events included), by the sender domain. Ranges of up to 90 days. With the `broadcast` dimension or `broadcast_id` (up to 100 broadcast ids), only broadcast emails are counted, totals included; the `email` dimension and `email_id` are refused (400). A range reaching more than 12 hours the hourly roll-up has not yet summed answers 503 with `Retry-After` (the roll-up is behind; it catches up within minutes). See docs/metrics.md.',
  },
};
