import { uuidv7obj } from 'uuidv7';

/**
 * Ids are TypeID-shaped: a prefix, `_`, then a UUIDv7 written in 26 lowercase Crockford base32
 * characters. UUIDv7 starts with a millisecond timestamp and the `uuidv7` package keeps ids
 * monotonic within a millisecond, so sorting ids as strings sorts emails by creation time and the
 * listing index needs no separate timestamp sort key.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const SUFFIX = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

const EMAIL_ID_PREFIX = 'em';

/** A sending domain's id: `dom_…` (here, not in domains.ts, so that naming one loads no domain code). */
export const DOMAIN_ID_PREFIX = 'dom';

/** Encodes 16 bytes (128 bits) as 26 base32 characters, the TypeID way (2 leading pad bits). */
export function encodeBase32(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new Error('expected 16 bytes');
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** The 128 bits of a 26-character suffix, as a number. */
export function decodeBase32(suffix: string): bigint {
  let value = 0n;
  for (const char of suffix) value = (value << 5n) | BigInt(ALPHABET.indexOf(char));
  return value;
}

export const newId = (prefix: string): string => `${prefix}_${encodeBase32(uuidv7obj().bytes)}`;

export const newEmailId = (): string => newId(EMAIL_ID_PREFIX);

export const isId = (prefix: string, value: string): boolean =>
  value.startsWith(`${prefix}_`) && SUFFIX.test(value.slice(prefix.length + 1));

/** An id's shape as a JSON Schema pattern (for the OpenAPI document). */
export const idPattern = (prefix: string): string => `^${prefix}_${SUFFIX.source.slice(1)}`;

export const isEmailId = (value: string): boolean => isId(EMAIL_ID_PREFIX, value);

/** Sorts before every email id (the sweeper's starting point). */
export const FIRST_EMAIL_ID = `${EMAIL_ID_PREFIX}_`;

/**
 * The boundary between emails created before `ms` and from `ms` on: the UUIDv7 of that millisecond
 * with every other bit zero. No real id equals it (a real UUIDv7 has its version bits set), so
 * `id < emailIdAt(ms)` holds exactly for the ids of emails created before `ms`.
 */
export function emailIdAt(ms: number): string {
  const bytes = new Uint8Array(16);
  let t = Math.max(0, Math.floor(ms));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  return `${EMAIL_ID_PREFIX}_${encodeBase32(bytes)}`;
}

/** When an email id was created (the UUIDv7's millisecond timestamp). */
export function emailIdTime(id: string): number {
  return Number(decodeBase32(id.slice(EMAIL_ID_PREFIX.length + 1)) >> 80n);
}
