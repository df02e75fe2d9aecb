import type { DocsOf } from '../shared/route.js';
import type { USAGE_ROUTES } from './routes.js';

/** Usage's route in the OpenAPI document: its words and example (routes.ts declares it). */
export const USAGE_DOCS: DocsOf<typeof USAGE_ROUTES> = {
  'get-usage': {
    ok: "Usage and limits in SDK 6.38's shape (`resend.usage.get()`), and our `sending`.",
    example: {
      object: 'usage',
      emails: {
        daily: { used: 1320, limit: 50000, sent: 1200, received: 14, resets_at: '2026-11-23T03:25:00.000Z' },
        monthly: {
          used: 23870,
          limit: 1500000,
          sent: 23870,
          received: 310,
          resets_at: '2026-12-01T00:00:00.000Z',
        },
      },
      contacts: { used: 0, limit: 0 },
      segments: { used: 0, limit: null },
      broadcasts: { used: 0, limit: null },
      ai_credits: { used: 0, limit: null, next_increase_at: null },
      automation_runs: { used: 0, limit: 0, resets_at: '2026-12-01T00:00:00.000Z' },
      domains: { used: 3, limit: null },
      rate_limit: { limit: 10, duration: '1s' },
      sending: { paused: false, max_send_rate: 14, limits_read_at: '2026-11-22T03:25:00.000Z' },
    },
    description:
      "From the account's SES limits as the send consumers last read them (never a call to SES per request) and the email metrics' counters. `emails.daily` is SES's rolling 24-hour quota: `used` what SES counts against it (recipients, the whole account in the region), `limit` its Max24HourSend (null: unlimited, or not read yet), `sent` and `received` our emails of the last 24 hours, `resets_at` when what `used` counts has left the window (24 hours after SES was read). `emails.monthly` (SES has no such limit): this UTC month's emails, `limit` the daily limit times the month's days (-1: unlimited or not read yet). Contacts, segments, broadcasts, AI credits and automations are Resend's features this service does not have: 0 used, no allowance. `sending` (ours): `paused` when SES has paused the account's sending. See docs/api.md, \"Usage\".",
  },
};
