import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { DEFAULT_LIMIT, MAX_LIMIT, type PageQuery, queryInteger } from './list.js';

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

/** Response status classes the list filters by. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];
export const statusClassOf = (status: number): StatusClass =>
  status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx';

export const LOG_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

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
 * Fields whose values are secrets wherever they appear in a body: a new key's `token` (POST
 * /v1/api-keys), a webhook's `signing_secret` (create, get, rotate) and `previous_secret`, and an
 * attachment's presigned `download_url` (a bearer credential for the file). Attachments' `content`
 * is handled where it is: inside `attachments`.
 */
const SECRET_FIELDS = new Set(['token', 'signing_secret', 'previous_secret', 'secret', 'download_url']);

/** A value that is a credential whatever field it is in: an API key or a webhook signing secret. */
const SECRET_TEXT = /\b(esk_[A-Za-z0-9_-]{16,128}|whsec_[A-Za-z0-9+/=_-]{16,})/g;

/**
 * A copy of a JSON value with every secret replaced by REDACTED, strings past the cap cut, and
 * the walk stopped once the copy is past the cap (`truncated`): the work is bounded by the cap,
 * not by the body (a send's 40 MB of attachments costs no more than a small one).
 */
export function redact(value: unknown, cap = LOG_BODY_CAP_BYTES): { value: unknown; truncated: boolean } {
  let budget = cap;
  let truncated = false;
  const walk = (v: unknown, key: string | undefined, inAttachments: boolean): unknown => {
    if (budget <= 0) {
      truncated = true;
      return undefined;
    }
    if (key !== undefined && (SECRET_FIELDS.has(key) || (inAttachments && key === 'content'))) {
      budget -= REDACTED.length + key.length;
      return v === null || v === undefined ? v : REDACTED;
    }
    if (typeof v === 'string') {
      // Secrets are replaced before the cut (a token is at most 132 characters), so no part of one is kept.
      let s = v.slice(0, budget + 160).replace(SECRET_TEXT, REDACTED);
      if (s.length > budget) {
        truncated = true;
        s = s.slice(0, Math.max(0, budget));
      }
      budget -= s.length + 2;
      return s;
    }
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const item of v) {
        if (budget <= 0) {
          truncated = true;
          break;
        }
        out.push(walk(item, undefined, key === 'attachments'));
      }
      return out;
    }
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        if (budget <= 0) {
          truncated = true;
          break;
        }
        budget -= k.length + 4;
        out[k] = walk(item, k, inAttachments);
      }
      return out;
    }
    budget -= 8;
    return v;
  };
  const copy = walk(value, undefined, false);
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
 * A log's id: a UUIDv7 (so ids sort by time, as Resend's are UUIDs) whose time is the request's
 * and whose other bits come from the request's id, so the same request always has the same log id
 * and a line delivered twice writes the same item.
 */
export function logIdOf(requestId: string, atMs: number): string {
  const bytes = createHash('sha256').update(requestId).digest().subarray(0, 16);
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const isLogId = (value: string) => UUID.test(value);

/** The line a request's entry is emitted as: one JSON object, marked, on one line. */
export const requestLogLine = (entry: RequestLogEntry): string =>
  JSON.stringify({ [LOG_LINE_MARKER]: LOG_LINE_TYPE, ...entry });

const lineSchema = z.object({
  [LOG_LINE_MARKER]: z.literal(LOG_LINE_TYPE),
  id: z.string().check(z.regex(UUID)),
  created_at: z.string(),
  method: z.string(),
  endpoint: z.string(),
  response_status: z.number().check(z.int()),
  user_agent: z.nullable(z.string()),
  api_key_id: z.nullable(z.string()),
  duration_ms: z.number(),
  request_body: z.nullable(z.string()),
  response_body: z.nullable(z.string()),
});

/**
 * The entry in a line of a function's log, or null for any other line (the writer skips it). A
 * line may arrive with the runtime's prefix (`<time>\t<request id>\tINFO\t…`) or wrapped in its
 * JSON log format (`{"message": "…"}`): the entry is the JSON object from the first `{`.
 */
export function parseRequestLogLine(message: string): RequestLogEntry | null {
  const start = message.indexOf('{');
  if (start < 0) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.slice(start));
  } catch {
    return null;
  }
  const wrapped = (parsed as { message?: unknown } | null)?.message;
  if (typeof wrapped === 'string' && !(parsed as Record<string, unknown>)[LOG_LINE_MARKER])
    return parseRequestLogLine(wrapped);
  const result = lineSchema.safeParse(parsed);
  if (!result.success) return null;
  const { [LOG_LINE_MARKER]: _marker, ...entry } = result.data;
  return entry as RequestLogEntry;
}

// The API: the list's query, and the answers (exported for the OpenAPI document).

const logIdCursor = (field: string) =>
  z.optional(z.string().check(z.refine(isLogId, `${field} must be a log id (a UUID) from a listed log`)));

/** `GET /v1/logs`: `limit` (1–100, default 20), a cursor (`after` or `before`, a log id), and `status` (2xx, 3xx, 4xx, 5xx). */
export const listLogsQuerySchema = z.pipe(
  z
    .strictObject({
      limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
      after: logIdCursor('after'),
      before: logIdCursor('before'),
      status: z.optional(
        z.enum(STATUS_CLASSES, { error: `status must be one of ${STATUS_CLASSES.join(', ')}` }),
      ),
    })
    .check(
      z.superRefine((query, ctx) => {
        const q = query as { after?: string; before?: string };
        if (q.after !== undefined && q.before !== undefined)
          ctx.issues.push({
            code: 'custom',
            path: ['before'],
            message: 'give after or before, not both',
            input: q.before,
          });
      }),
    ),
  z.transform((query) => ({ ...query, offset: 0 })),
);

export interface ListLogsQuery extends PageQuery {
  status?: StatusClass;
}

const logFields = {
  id: z.string(),
  created_at: z.string(),
  endpoint: z.string(),
  method: z.enum(LOG_METHODS),
  response_status: z.number().check(z.int()),
  user_agent: z.nullable(z.string()),
  /** Ours: the key that made the request (null: no valid key). */
  api_key_id: z.nullable(z.string()),
  /** Ours: how long the handler took, in milliseconds. */
  duration_ms: z.number(),
};

/** One log in a list (Resend's LogSummary, and our api_key_id and duration_ms). */
export const logSummarySchema = z.object(logFields);

/** `GET /v1/logs`'s answer (Resend's ListLogsResponse). */
export const logListResponseSchema = z.object({
  object: z.literal('list'),
  has_more: z.boolean(),
  data: z.array(logSummarySchema),
});

/** `GET /v1/logs/{id}`'s answer (Resend's Log, with our additions). */
export const logResponseSchema = z.object({
  object: z.literal('log'),
  ...logFields,
  request_body: z.nullable(z.record(z.string(), z.unknown())),
  response_body: z.nullable(z.record(z.string(), z.unknown())),
});

export type LogSummary = z.infer<typeof logSummarySchema>;
export type LogResponse = z.infer<typeof logResponseSchema>;

export const toLogSummary = (entry: RequestLogEntry): LogSummary => ({
  id: entry.id,
  created_at: entry.created_at,
  endpoint: entry.endpoint,
  method: entry.method as LogSummary['method'],
  response_status: entry.response_status,
  user_agent: entry.user_agent,
  api_key_id: entry.api_key_id,
  duration_ms: entry.duration_ms,
});

const parsedBody = (text: string | null): Record<string, unknown> | null =>
  text === null ? null : (JSON.parse(text) as Record<string, unknown>);

export const toLogResponse = (entry: RequestLogEntry): LogResponse => ({
  object: 'log',
  ...toLogSummary(entry),
  request_body: parsedBody(entry.request_body),
  response_body: parsedBody(entry.response_body),
});

/** Where request logs are kept and read (adapters/dynamodb/request-log-repository.ts). */
export interface RequestLogRepository {
  /** Stores entries; storing one again (a line delivered twice) writes the same item. */
  put(entries: readonly RequestLogEntry[], retentionDays: number): Promise<void>;
  list(query: ListLogsQuery): Promise<{ data: RequestLogEntry[]; has_more: boolean }>;
  get(id: string): Promise<RequestLogEntry | null>;
}

/** Where the middleware sends a request's line (stdout on Lambda; the local sink locally). */
export interface RequestLogSink {
  write(line: string): void;
}
