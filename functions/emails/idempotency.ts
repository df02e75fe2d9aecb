import { createHash } from 'node:crypto';
import { ApiError } from '../shared/errors.js';

/**
 * Idempotent sends: a request with an `Idempotency-Key` is remembered for 24 hours with a
 * fingerprint of its body and its answer, per API key. The same key and body get the same answer
 * (same email, same status code) without sending again; the same key with another body is refused.
 */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A request holding a key longer than this has died (longer than a function may run). */
export const IDEMPOTENCY_LEASE_MS = 30_000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

export const invalidIdempotencyKey = (message: string) =>
  new ApiError(400, 'invalid_idempotency_key', message);

/** The header's value, checked: 1 to 256 characters. Undefined when the header is absent. */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length === 0 || header.trim().length === 0)
    throw invalidIdempotencyKey('The Idempotency-Key header is empty; send 1 to 256 characters.');
  if (header.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw invalidIdempotencyKey(
      `The Idempotency-Key header is ${header.length} characters long; the limit is ${MAX_IDEMPOTENCY_KEY_LENGTH}.`,
    );
  return header;
}

/** JSON with object keys sorted, so the same body in another key order has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const fingerprint = (body: unknown): string =>
  createHash('sha256').update(canonical(body)).digest('hex');

/** The key as stored: hashed, so any characters and lengths fit a table key and nothing of it is kept. */
export const hashIdempotencyKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

export type IdempotencyBegin =
  /** First use: go ahead, with this email id. */
  | { outcome: 'new' }
  /** Done before with this body: answer the same. */
  | { outcome: 'replay'; response: StoredResponse }
  /** Used before with another body. */
  | { outcome: 'mismatch' }
  /** Another request with this key is running. */
  | { outcome: 'in_progress' }
  /** A request with this key died midway: finish its email (this id), without sending twice. */
  | { outcome: 'resume'; emailId: string };

export const idempotencyMismatch = () =>
  new ApiError(
    409,
    'invalid_idempotent_request',
    'This Idempotency-Key was used with a different request body in the last 24 hours; use a new key for a new email.',
  );

export const idempotencyInProgress = () =>
  new ApiError(
    409,
    'concurrent_idempotent_requests',
    'Another request with this Idempotency-Key is in progress; retry once it has finished.',
  );
