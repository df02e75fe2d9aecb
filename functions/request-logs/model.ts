import { createHash } from 'node:crypto';
import { brotliCompressSync, constants } from 'node:zlib';
import { notFound } from '../shared/errors.js';
import { UUID, uuidV7Of } from '../shared/ids.js';
import type { STATUS_CLASSES } from './status-classes.js';
import { encodeZ85 } from './z85.js';

/**
 * Request logs (`GET /v1/logs`, `GET /v1/logs/{id}`): one entry per API request a handler answered,
 * in Resend's shape. The HTTP middleware builds the entry (redacted, bodies capped) and emits it as
 * one JSON line on stdout; on AWS a subscription filter on each API function's log group delivers
 * those lines to the writer function, which stores them (docs/logs.md). Nothing here touches AWS.
 */

/** Largest body kept, per body, in bytes of its JSON text (after redaction). Larger: a truncated preview. */
export const LOG_BODY_CAP_BYTES = 8 * 1024;

/** How long request logs are kept by default (Resend's API logs: 30 days). */
export const DEFAULT_LOG_RETENTION_DAYS = 30;

/** The field that marks a request-log line among a function's other output (the subscription's filter). */
export const LOG_LINE_MARKER = 'log_type';
export const LOG_LINE_TYPE = 'api_request';

/** What replaces a secret. */
export const REDACTED = '[redacted]';

import { LOG_METHODS } from './status-classes.js';

export { LOG_METHODS, STATUS_CLASSES } from './status-classes.js';
export type StatusClass = (typeof STATUS_CLASSES)[number];
export const statusClassOf = (status: number): StatusClass =>
  status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx';

export const isLogMethod = (method: string): method is (typeof LOG_METHODS)[number] =>
  (LOG_METHODS as readonly string[]).includes(method);

/**
 * The most logs a filtered page reads (`method`, `path`, `api_key_id`: a filter on the logs' own
 * partitions, no index of their own, so a log costs no more write units): spread over the
 * partitions, each read at most its share. A page that reaches it answers the matches found so
 * far, `has_more: true` and `scanned_to`, the cursor to read on from.
 */
export const LOG_FILTER_READ_BOUND = 4_000;

/** One request's entry, as emitted and stored: bodies are JSON texts (redacted, capped) or null. */
export interface RequestLogEntry {
  id: string;
  created_at: string;
  method: string;
  endpoint: string;
  response_status: number;
  user_agent: string | null;
  api_key_id: string | null;
  duration_ms: number;
  request_body: string | null;
  response_body: string | null;
}

/**
 * Fields whose values are secrets wherever they appear in a body, whatever their case: a new key's
 * `token` (POST /v1/api-keys), a webhook's `signing_secret` (create, get, rotate) and
 * `previous_secret`, an attachment's presigned `download_url` (a bearer credential for the file),
 * and the names credentials go by elsewhere (an email's custom `headers` may carry an
 * `Authorization` or an `X-Api-Key`). Attachments' `content` is handled where it is: inside
 * `attachments`.
 */
const SECRET_FIELDS = new Set([
  'token',
  'signing_secret',
  'previous_secret',
  'secret',
  'download_url',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api_key',
  'apikey',
  'password',
  'client_secret',
  'access_token',
  'refresh_token',
  'private_key',
]);
const isSecretField = (key: string) => SECRET_FIELDS.has(key.toLowerCase());

/**
 * A value that is a credential whatever field it is in: an API key, a webhook signing secret, a
 * bearer token. Not anchored at a word boundary: a key glued to other text is still a key.
 */
const SECRET_TEXT = /esk_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{16,}/g;

/** A presigned S3 link anywhere (its signature is a bearer credential): the whole string goes. */
const PRESIGNED = /X-Amz-(Signature|Credential|Security-Token)=/i;

/** The characters a secret is made of: a text cut inside a run of them may end in part of one. */
const isSecretChar = (c: number) =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 /* _ */ ||
  c === 45 /* - */ ||
  c === 43 /* + */ ||
  c === 47 /* / */ ||
  c === 61 /* = */ ||
  c === 46 /* . */ ||
  c === 126; /* ~ */

/** Bytes a character takes in JSON text (UTF-8, with JSON's escapes); a surrogate half counts 2. */
function jsonCharBytes(c: number): number {
  if (c === 34 || c === 92) return 2;
  if (c < 0x20) return c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
  if (c < 0x80) return 1;
  if (c < 0x800 || (c >= 0xd800 && c <= 0xdfff)) return 2;
  return 3;
}

/**
 * A text as a log keeps it: secrets replaced, then cut to `maxBytes` of its JSON text (quotes
 * included). The work is bounded by `maxBytes`, not by the text. A text cut before its end loses
 * the run of secret characters it ends in, so no head of a secret is kept either.
 */
export function textForLog(text: string, maxBytes: number): { text: string; bytes: number; cut: boolean } {
  // Replacing only shortens a text: a head a little past the budget is enough to fill it.
  const head = text.length > maxBytes + 256 ? text.slice(0, maxBytes + 256) : text;
  if (PRESIGNED.test(head)) return { text: REDACTED, bytes: REDACTED.length + 2, cut: false };
  let s = head.replace(SECRET_TEXT, REDACTED);
  let cut = head.length < text.length;
  let bytes = 2;
  let end = 0;
  for (; end < s.length; end++) {
    const size = jsonCharBytes(s.charCodeAt(end));
    if (bytes + size > maxBytes) {
      cut = true;
      break;
    }
    bytes += size;
  }
  if (cut) {
    // Not half a surrogate pair, and not the head of what may be a secret.
    if (end > 0 && (s.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    while (end > 0 && isSecretChar(s.charCodeAt(end - 1))) end--;
    s = s.slice(0, end);
    bytes = Buffer.byteLength(JSON.stringify(s));
  }
  return { text: s, bytes, cut };
}

/** Deepest nesting kept in a logged body (the API refuses deeper bodies); deeper: `[too deep]`. */
export const LOG_MAX_DEPTH = 32;

/** Longest field name kept, in bytes of JSON text. */
const MAX_KEY_BYTES = 256;

/**
 * A copy of a JSON value with every secret replaced by REDACTED, texts and names past the cap cut,
 * nesting past LOG_MAX_DEPTH replaced, and the walk stopped once the copy is past the cap
 * (`truncated`): the work is bounded by the cap, not by the body (a send's 40 MB of attachments
 * costs no more than a small one), and a value that refers to itself ends at the depth limit.
 * Sizes are counted in bytes of the copy's JSON text, escapes included.
 */
export function redact(value: unknown, cap = LOG_BODY_CAP_BYTES): { value: unknown; truncated: boolean } {
  let budget = cap;
  let truncated = false;
  const walk = (input: unknown, key: string | undefined, inAttachments: boolean, depth: number): unknown => {
    if (budget <= 0) {
      truncated = true;
      return undefined;
    }
    let v = input;
    if (key !== undefined && (isSecretField(key) || (inAttachments && key === 'content'))) {
      budget -= REDACTED.length + 2;
      return v === null || v === undefined ? v : REDACTED;
    }
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON: () => unknown }).toJSON();
    if (typeof v === 'string') {
      const cut = textForLog(v, budget);
      if (cut.cut) truncated = true;
      budget -= cut.bytes;
      return cut.text;
    }
    if (typeof v === 'bigint') v = String(v);
    if (v !== null && typeof v === 'object') {
      if (depth >= LOG_MAX_DEPTH) {
        truncated = true;
        budget -= 12;
        return '[too deep]';
      }
      budget -= 2;
      if (Array.isArray(v)) {
        const out: unknown[] = [];
        for (const item of v) {
          if (budget <= 0) {
            truncated = true;
            break;
          }
          budget -= 1;
          out.push(walk(item, undefined, key === 'attachments', depth + 1) ?? null);
        }
        return out;
      }
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        if (budget <= 0) {
          truncated = true;
          break;
        }
        const name = textForLog(k, Math.min(MAX_KEY_BYTES, budget));
        if (name.cut) truncated = true;
        budget -= name.bytes + 2;
        out[name.text] = walk(item, k, inAttachments, depth + 1);
      }
      return out;
    }
    if (typeof v === 'function' || typeof v === 'symbol') return undefined;
    budget -= typeof v === 'number' ? String(v).length : 5;
    return v;
  };
  const copy = walk(value, undefined, false, 0);
  return { value: copy, truncated };
}

/**
 * A body as a log keeps it: a JSON object's text (redacted), a JSON value that is not an object
 * wrapped as `{"json": …}` (Resend's schema has objects or null: a batch's array stays readable),
 * a body that is not JSON as `{"not_json": true, "size_bytes": n}` (never stored: it could hold
 * anything), and one past the cap as what fits of it (about LOG_BODY_CAP_BYTES: the fields and
 * items up to it, long strings cut) with `"_truncated": true` at its top: still an object, built in
 * the one pass, serialized once.
 */
export function bodyForLog(body: unknown, cap = LOG_BODY_CAP_BYTES): string | null {
  if (body === undefined || body === null || body === '') return null;
  if (typeof body === 'string' || Buffer.isBuffer(body))
    return JSON.stringify({ not_json: true, size_bytes: Buffer.byteLength(body) });
  const { value, truncated } = redact(body, cap);
  const object = (
    value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { json: value }
  ) as Record<string, unknown>;
  return JSON.stringify(truncated ? { _truncated: true, ...object } : object);
}

/**
 * A log's id: a UUIDv7 (shared/ids.ts: ids sort by time, and Resend's are UUIDs) whose time is the request's
 * and whose other bits come from the request's id, so the same request always has the same log id
 * and a line delivered twice writes the same item.
 */
export const logIdOf = (requestId: string, atMs: number): string =>
  uuidV7Of(atMs, createHash('sha256').update(requestId).digest());

/** A log's time, from its UUIDv7 id (its first 48 bits: milliseconds), as `created_at` writes it. */
export const logTimeOf = (id: string): string =>
  new Date(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)).toISOString();

export { UUID } from '../shared/ids.js';
export const isLogId = (value: string) => UUID.test(value);

/**
 * Largest line emitted, in bytes. A CloudWatch Logs event holds at most 256 KB, and Lambda splits
 * a longer line into several events, none of them JSON, which the filter would drop. The bodies'
 * caps keep a line near 20 KB; past this, its bodies are replaced by `{"_truncated": true}`.
 */
export const LOG_LINE_MAX_BYTES = 64 * 1024;

/** Longest `endpoint` and `user_agent` kept, in bytes of JSON text (secrets in them replaced). */
export const LOG_ENDPOINT_MAX_BYTES = 2048;
export const LOG_USER_AGENT_MAX_BYTES = 1024;

/** A request's path or user agent as a log keeps it: secrets replaced (a key pasted into a path), capped. */
export const headerForLog = (text: string, maxBytes: number): string => textForLog(text, maxBytes).text;

/**
 * Bodies whose JSON texts together are longer than this (in characters) travel in the line
 * compressed: `bodies`, brotli of `[request_body, response_body]` in Z85 (z85.ts), in place of the
 * two fields. A line's bytes are what CloudWatch Logs bills at ingestion ($0.50 a GB), and a
 * receipt's 6.5 KB body is about 1.8 KB so (brotli quality 5, about 0.2 ms: the request waits for
 * it). `created_at` is left out when it is the id's own time (the middleware's lines): the writer
 * reads it from the id.
 */
export const LOG_LINE_COMPRESS_ABOVE = 512;
const LINE_BROTLI = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};

/** The fields of a line: the entry, its bodies compressed when long (LOG_LINE_COMPRESS_ABOVE). */
function lineFields(entry: RequestLogEntry): Record<string, unknown> {
  const { created_at, request_body, response_body, ...rest } = entry;
  const fields: Record<string, unknown> = created_at === logTimeOf(entry.id) ? rest : { ...rest, created_at };
  const length = (request_body?.length ?? 0) + (response_body?.length ?? 0);
  if (length <= LOG_LINE_COMPRESS_ABOVE) return { ...fields, request_body, response_body };
  const bodies = brotliCompressSync(JSON.stringify([request_body, response_body]), LINE_BROTLI);
  return { ...fields, bodies: encodeZ85(bodies) };
}

/** The line a request's entry is emitted as: one JSON object, marked, on one line, at most LOG_LINE_MAX_BYTES. */
export function requestLogLine(entry: RequestLogEntry): string {
  const line = JSON.stringify({ [LOG_LINE_MARKER]: LOG_LINE_TYPE, ...lineFields(entry) });
  if (line.length * 3 <= LOG_LINE_MAX_BYTES || Buffer.byteLength(line) <= LOG_LINE_MAX_BYTES) return line;
  const dropped = JSON.stringify({ _truncated: true });
  return JSON.stringify({
    [LOG_LINE_MARKER]: LOG_LINE_TYPE,
    ...entry,
    endpoint: headerForLog(entry.endpoint, LOG_ENDPOINT_MAX_BYTES),
    user_agent: entry.user_agent === null ? null : headerForLog(entry.user_agent, LOG_USER_AGENT_MAX_BYTES),
    request_body: entry.request_body === null ? null : dropped,
    response_body: entry.response_body === null ? null : dropped,
  });
}

/**
 * What the log routes answer on a stack deployed with request logs off (`-c requestLogs=false`):
 * a 404 that says why, rather than an empty list that would read as "no requests".
 */
export const requestLogsAreOff = () =>
  notFound(
    'Request logs are turned off on this deployment (its requestLogs setting is false): no request is recorded.',
  );

/** Where the middleware sends a request's line (stdout on Lambda; the local sink locally). */
export interface RequestLogSink {
  write(line: string): void;
}
