import { describe, expect, it } from 'vitest';
import { canTransition, EMAIL_STATUSES, statusForEvent } from '../../functions/core/status.js';

describe('email status rules', () => {
  it('moves only from queued, only forward', () => {
    const allowed = EMAIL_STATUSES.flatMap((from) =>
      EMAIL_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed).toEqual(['queued->delivered', 'queued->bounced', 'queued->failed']);
  });

  it('maps final events to statuses and leaves the others alone', () => {
    expect(statusForEvent('delivered')).toBe('delivered');
    expect(statusForEvent('bounced')).toBe('bounced');
    expect(statusForEvent('failed')).toBe('failed');
    expect(statusForEvent('delayed')).toBeUndefined();
    expect(statusForEvent('complained')).toBeUndefined();
  });
});
