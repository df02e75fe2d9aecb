import { uuidv7obj } from 'uuidv7';

/**
 * The ids' rule, for every concept: the service's own resources have TypeIDs (`em_…`, `dom_…`: a
 * prefix, `_`, then a UUIDv7 written in 26 lowercase Crockford base32 characters); where Resend's
 * document says a field is `format: uuid` (a request log's id), the id is a UUIDv7 in its usual
 * form (`uuidV7Of`). Both start with a millisecond timestamp, and the `uuidv7` package keeps ids
 * monotonic within a millisecond, so sorting ids as strings sorts by creation time: cursors and
 * newest-first lists need no separate timestamp sort key.
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

/**
 * A UUIDv7 in its usual form: the audience concepts' ids (contacts, segments, topics, contact
 * properties, imports), where Resend's ids are UUIDs and SDK code may check that they are.
 */
export const newUuid = (): string => uuidv7obj().toString();

/** Whether a string is a UUID (any version), lower-case as newUuid writes it. */
export const isUuid = (value: string): boolean => UUID.test(value);

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

/** A UUID in its usual form (8-4-4-4-12 lowercase hex digits). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A UUIDv7 whose time is `atMs` and whose other bits are the first 16 bytes of `bits` (so the same
 * bits at the same time give the same id: an id derived from a request's, written twice as one).
 */
export function uuidV7Of(atMs: number, bits: Uint8Array): string {
  const bytes = Buffer.from(bits.subarray(0, 16));
  let t = Math.max(0, Math.floor(atMs));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
