import type { Usage } from '../answers.js';
import { api } from '../api.js';
import { ErrorNote, useLoad } from '../components.js';

/**
 * The account's usage on the Overview (`GET /v1/usage`): SES's 24-hour quota and what is used of it,
 * this month's emails, and a warning when the quota is nearly spent or SES has paused sending.
 * docs/api.md ("Usage") says what each number is.
 */

/** The share of the 24-hour quota past which the card warns (functions/usage/model.ts QUOTA_WARNING_SHARE). */
const NEARLY_SPENT = 0.8;

const count = (n: number) => n.toLocaleString();
const at = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function UsageCard() {
  const usage = useLoad(() => api<Usage>('/v1/usage', { what: 'the usage' }), []);
  const u = usage.data;
  if (!u) return <ErrorNote error={usage.error} />;
  const daily = u.emails.daily;
  const share = daily.limit ? daily.used / daily.limit : 0;
  const nearlySpent = daily.limit !== null && share >= NEARLY_SPENT;
  return (
    <section aria-labelledby="usage-heading" class="usage">
      <h2 id="usage-heading">Usage</h2>
      {u.sending.paused && (
        <p class="notice" role="alert">
          <strong>Sending is paused.</strong> SES has paused this account's sending: emails are accepted and
          wait, queued, until it is resumed (see the SES console's account dashboard).
        </p>
      )}
      {nearlySpent && (
        <p class="notice" role="alert">
          <strong>The 24-hour quota is nearly spent:</strong> {count(daily.used)} of {count(daily.limit ?? 0)}{' '}
          ({Math.floor(share * 100)} %). Past it, emails wait until the window frees room.
        </p>
      )}
      <div class="cards">
        <div class={`card${nearlySpent ? ' over' : ''}`}>
          <div class="muted">Last 24 hours (SES quota)</div>
          <div class="value">
            {count(daily.used)} / {daily.limit === null ? 'no limit' : count(daily.limit)}
          </div>
          {daily.limit !== null && (
            <meter
              min={0}
              max={daily.limit}
              value={daily.used}
              high={daily.limit * NEARLY_SPENT}
              aria-label="Share of the 24-hour quota used"
            />
          )}
          <p class="note">
            {count(daily.sent)} sent, {count(daily.received)} received here
            {u.sending.limits_read_at ? `; SES read ${at(u.sending.limits_read_at)}` : '; SES not read yet'}
          </p>
        </div>
        <div class="card">
          <div class="muted">This month</div>
          <div class="value">{count(u.emails.monthly.sent)} sent</div>
          <p class="note">
            {count(u.emails.monthly.received)} received; resets {at(u.emails.monthly.resets_at)}
          </p>
        </div>
        <div class="card">
          <div class="muted">Sending rate</div>
          <div class="value">
            {u.sending.max_send_rate === null ? '—' : `${count(u.sending.max_send_rate)} / s`}
          </div>
          <p class="note">
            SES's rate; each API key {u.rate_limit.limit} requests / {u.rate_limit.duration};{' '}
            {count(u.domains.used)} domains
          </p>
        </div>
      </div>
    </section>
  );
}
