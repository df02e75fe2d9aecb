import { describe, expect, it } from 'vitest';
import { statusForEvent } from '../../functions/core/status.js';

describe('email status rules', () => {
  it('maps final events to statuses and leaves the others alone', () => {
    expect(statusForEvent('delivered')).toBe('delivered');
    expect(statusForEvent('bounced')).toBe('bounced');
    expect(statusForEvent('failed')).toBe('failed');
    expect(statusForEvent('delayed')).toBeUndefined();
    expect(statusForEvent('complained')).toBeUndefined();
  });
});
