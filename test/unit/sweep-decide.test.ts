import { describe, expect, it } from 'vitest';
import type { EmailState } from '../../functions/emails/ports.js';
import { decide } from '../../functions/emails/sweep.js';
import { awsSweepSettings } from '../support/fakes.js';

const settings = awsSweepSettings;
const now = Date.parse('2026-11-23T12:00:00.000Z');
const state = (over: Partial<EmailState> = {}): EmailState => ({
  id: 'em_x',
  status: 'queued',
  created_at: new Date(now - 3_600_000).toISOString(),
  ...over,
});

describe('what the sweeper does with one queued email older than the grace period', () => {
  it.each([
    ['final: nothing, and never again', state({ status: 'delivered' }), { action: 'none', resolved: true }],
    ['sent: nothing, and never again', state({ sent_at: 'x' }), { action: 'none', resolved: true }],
    ['unsent, never re-queued: re-queue', state(), { action: 'requeue', waitedMs: 3_600_000 }],
    [
      'refused recently (its message is being retried): wait',
      state({ refused_at: now - 5 * 60_000 }),
      { action: 'none', resolved: false },
    ],
    [
      'refused long ago and not tried since: re-queue',
      state({ refused_at: now - 25 * 60_000 }),
      { action: 'requeue', waitedMs: 25 * 60_000 },
    ],
    [
      'accepted days ago, waiting out a spent SES quota (each return records it was deferred): wait, never fail',
      state({
        created_at: new Date(now - 3 * 86_400_000).toISOString(),
        refused_at: now - 12 * 60_000,
      }),
      { action: 'none', resolved: false },
    ],
    [
      'unsent, re-queued long ago: re-queue',
      state({ requeued_at: now - 21 * 60_000 }),
      { action: 'requeue', waitedMs: 21 * 60_000 },
    ],
    [
      'unsent, re-queued recently: wait (its new message may still be retried)',
      state({ requeued_at: now - 60_000 }),
      { action: 'none', resolved: false },
    ],
    [
      "scheduled for later: not the sweeper's (the scheduler watches it in the due index)",
      state({ scheduled_at: new Date(now + 60_000).toISOString() }),
      { action: 'none', resolved: true },
    ],
    [
      'scheduled, due a minute ago, long accepted: waits from its time, not from its acceptance',
      state({
        created_at: new Date(now - 20 * 86_400_000).toISOString(),
        scheduled_at: new Date(now - 60_000).toISOString(),
      }),
      { action: 'none', resolved: false },
    ],
    [
      'an attempt began recently: wait for its Send event',
      state({ send_started_at: now - 60_000 }),
      { action: 'none', resolved: false },
    ],
  ])('%s', (_, given, expected) => {
    expect(decide(given, now, settings)).toEqual(expected);
  });

  it('an attempt unconfirmed for the bound: failed as outcome unknown, never sent again', () => {
    const decision = decide(
      state({ send_started_at: now - 31 * 60_000, attempt_error: 'TimeoutError: no answer in 10000 ms' }),
      now,
      settings,
    );
    expect(decision).toMatchObject({ action: 'fail-unknown', attemptStartedAt: now - 31 * 60_000 });
    if (decision.action !== 'fail-unknown') throw new Error('unreachable');
    expect(decision.reason).toContain('outcome unknown');
    expect(decision.reason).toContain('TimeoutError: no answer in 10000 ms');
    expect(decision.reason).toContain('30 minutes');
    expect(decision.reason).toContain('not sent again');
  });
});
