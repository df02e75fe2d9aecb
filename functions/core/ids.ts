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

export const newId = (prefix: string): string => `${prefix}_${encodeBase32(uuidv7obj().bytes)}`;

export const newEmailId = (): string => newId(EMAIL_ID_PREFIX);

export const isId = (prefix: string, value: string): boolean =>
  value.startsWith(`${prefix}_`) && SUFFIX.test(value.slice(prefix.length + 1));

export const isEmailId = (value: string): boolean => isId(EMAIL_ID_PREFIX, value);
