import { createHmac, timingSafeEqual } from 'node:crypto';
import { addressKey } from '../contacts/contact.js';
import { type KeySet, signingKey } from './keys.js';

/**
 * An unsubscribe link's token: `<payload>.<mac>`, both base64url. The payload names the key that
 * signed it and what it opts out of: `v1`, the key id, the address (lower-cased), the topic id (empty:
 * a global unsubscribe) and the email id, joined by newlines. The mac is HMAC-SHA256 of the payload
 * under that key, all 32 bytes: a token cannot be forged or altered without the key, nor guessed
 * (2^256 macs per payload). It carries no expiry: a link works as long as its key is listed
 * (keys.ts: at least LINK_LIFETIME_DAYS after its email).
 */

export interface UnsubscribeClaim {
  /** Lower-cased. */
  readonly address: string;
  /** Null: a global unsubscribe. */
  readonly topicId: string | null;
  readonly emailId: string;
}

const VERSION = 'v1';
/** What the mac covers is prefixed, so no other HMAC made with these keys can pass for a token. */
const DOMAIN = 'unsubscribe-link';
/** A longer token is refused unread (an address is at most 320 characters). */
export const MAX_TOKEN_LENGTH = 800;

const mac = (secret: string, payload: string) =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${DOMAIN}\n${payload}`).digest();

export function signToken(keys: KeySet, claim: UnsubscribeClaim, now: Date): string {
  const key = signingKey(keys, now);
  const payload = [VERSION, key.id, addressKey(claim.address), claim.topicId ?? '', claim.emailId].join('\n');
  return `${Buffer.from(payload).toString('base64url')}.${mac(key.secret, payload).toString('base64url')}`;
}

/** The token's key id, or undefined when it is not a token at all (checked before any key is read). */
export function tokenKeyId(token: string): string | undefined {
  return parse(token)?.fields[1];
}

function parse(token: string) {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const payload = Buffer.from(match[1] as string, 'base64url').toString('utf8');
  // base64url decoding is lenient: the payload must encode back to exactly what was sent.
  if (Buffer.from(payload).toString('base64url') !== match[1]) return undefined;
  const fields = payload.split('\n');
  if (fields.length !== 5 || fields[0] !== VERSION) return undefined;
  return { payload, fields, mac: Buffer.from(match[2] as string, 'base64url') };
}

/** The claim of a token signed by one of these keys, else undefined (malformed, altered, forged, or its key dropped). */
export function verifyToken(keys: KeySet, token: string): UnsubscribeClaim | undefined {
  const parsed = parse(token);
  if (!parsed) return undefined;
  const [, keyId, address, topicId, emailId] = parsed.fields as [string, string, string, string, string];
  const key = keys.keys.find((k) => k.id === keyId);
  if (!key) return undefined;
  const expected = mac(key.secret, parsed.payload);
  if (expected.length !== parsed.mac.length || !timingSafeEqual(expected, parsed.mac)) return undefined;
  if (!address.includes('@') || !emailId) return undefined;
  return { address, topicId: topicId || null, emailId };
}
