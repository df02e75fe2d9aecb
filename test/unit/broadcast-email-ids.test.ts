import { describe, expect, it } from 'vitest';
import { broadcastEmailId } from '../../functions/broadcasts/email-ids.js';
import { emailIdTime, isEmailId } from '../../functions/shared/ids.js';

describe("a broadcast email's id", () => {
  const broadcast = '019ac9f0-0000-7000-8000-000000000001';
  it('is an email id carrying its page time, the same for the same contact and page', () => {
    const id = broadcastEmailId(broadcast, 'contact-a', 1_764_000_000_123);
    expect(isEmailId(id)).toBe(true);
    expect(emailIdTime(id)).toBe(1_764_000_000_123);
    expect(broadcastEmailId(broadcast, 'contact-a', 1_764_000_000_123)).toBe(id);
  });
  it('differs by contact and by broadcast', () => {
    const at = 1_764_000_000_000;
    const ids = new Set([
      broadcastEmailId(broadcast, 'contact-a', at),
      broadcastEmailId(broadcast, 'contact-b', at),
      broadcastEmailId('019ac9f0-0000-7000-8000-000000000002', 'contact-a', at),
    ]);
    expect(ids.size).toBe(3);
  });
});
