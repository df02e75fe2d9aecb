import { describe, expect, it } from 'vitest';
import { encodeBase32, isEmailId, newEmailId } from '../../functions/shared/ids.js';

describe('email ids', () => {
  it('have the shape em_<26 base32 characters>', () => {
    const id = newEmailId();
    expect(id).toMatch(/^em_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(isEmailId(id)).toBe(true);
  });

  it('sort as strings in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 2000 }, () => newEmailId());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('encode 128 bits the TypeID way', () => {
    expect(encodeBase32(new Uint8Array(16))).toBe('00000000000000000000000000');
    expect(encodeBase32(new Uint8Array(16).fill(255))).toBe('7zzzzzzzzzzzzzzzzzzzzzzzzz');
  });

  it('are recognised strictly', () => {
    for (const bad of [
      '',
      'em_',
      'em_123',
      'dom_01m80mv90eew9ryfvqd1ksnhes',
      'em_01m80mv90eew9ryfvqd1ksnheS',
      'em_81m80mv90eew9ryfvqd1ksnhes',
      'em_01m80mv90eew9ryfvqd1ksnhu',
    ]) {
      expect(isEmailId(bad)).toBe(false);
    }
  });
});
