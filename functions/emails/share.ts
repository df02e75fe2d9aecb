import { createHash, randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import { validationError } from '../shared/errors.js';

/**
 * Sharing an email (POST /v1/emails/{id}/share, Resend's shape): a link that opens a read-only
 * page of one email, without a key, until it expires. The link carries a random token of
 * SHARE_TOKEN_BYTES (256 bits); only its SHA-256 is stored, with the email's id and the expiry,
 * so the table holds nothing that opens a page, and no key can make a link to another email (the
 * email a token opens is the one stored under its hash at creation, never read from the request).
 */

/** Random bytes of a share token: 32 (256 bits, twice the 128 the issue asks), 43 base64url characters. */
export const SHARE_TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The longest a link lives, and how long one lives when `expires_in` is not given: Resend's 48 hours. */
export const MAX_SHARE_MS = 48 * 3600_000;

/**
 * Views of one link a minute (the share page's own throttle, per token): a person reading and
 * reloading stays far below it; a link posted somewhere public cannot be made to cost more than
 * this many reads a minute. Past it the page answers 429 with Retry-After.
 */
export const SHARE_VIEWS_PER_MINUTE = 60;
export const SHARE_WINDOW_MS = 60_000;

export const newShareToken = (): string => randomBytes(SHARE_TOKEN_BYTES).toString('base64url');
export const hashShareToken = (token: string): string => createHash('sha256').update(token).digest('hex');
/** Whether a path segment can be a token at all (anything else is refused without a read). */
export const looksLikeShareToken = (token: string): boolean => TOKEN_PATTERN.test(token);

const UNITS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3600_000,
  hr: 3600_000,
  hrs: 3600_000,
  hour: 3600_000,
  hours: 3600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/**
 * Resend's duration strings (`10m`, `2 hours`, `1 day`, `48h`): a positive number and a unit of
 * seconds, minutes, hours or days (`s`, `sec`, `second(s)`, `m`, `min`, `minute(s)`, `h`, `hr`,
 * `hour(s)`, `d`, `day(s)`), at most 48 hours. Undefined: 48 hours. Throws a validation error.
 */
export function parseExpiresIn(value: string | undefined): number {
  if (value === undefined) return MAX_SHARE_MS;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(value);
  const unit = match && UNITS[(match[2] ?? '').toLowerCase()];
  if (!match || !unit)
    throw validationError(
      `expires_in must be a duration such as "10m", "2 hours" or "1 day" (got ${JSON.stringify(value)}).`,
    );
  const ms = Math.round(Number(match[1]) * unit);
  if (ms < 1000) throw validationError('expires_in must be at least 1 second.');
  if (ms > MAX_SHARE_MS) throw validationError(`expires_in must be at most 48 hours (got "${value}").`);
  return ms;
}

/** The request body (optional: Resend's SDK sends `{}` when no duration is given). */
export const shareEmailSchema = z.object(
  { expires_in: z.optional(z.string({ error: 'expires_in must be a string such as "10m" or "2 hours"' })) },
  { error: 'the body must be a JSON object' },
);

/** A link as stored: the token's hash, the email it opens, and when it stops (epoch ms). */
export interface StoredShare {
  hash: string;
  email_id: string;
  expires_ms: number;
}

/** What opening a link finds: the email it opens, or why not. */
export type OpenedShare =
  | { kind: 'open'; email_id: string; expires_ms: number }
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'throttled'; retry_after_s: number };

export interface ShareStore {
  create(share: StoredShare): Promise<void>;
  /** Opens the link with this hash at `nowMs`, counting the view in its per-token window. */
  open(hash: string, nowMs: number): Promise<OpenedShare>;
}
