import { brotliDecompressSync } from 'node:zlib';
import * as z from 'zod/mini';
import { bothCursors, DEFAULT_LIMIT, MAX_LIMIT, queryInteger } from '../shared/list.js';
import {
  isLogId,
  LOG_LINE_MARKER,
  LOG_LINE_TYPE,
  LOG_METHODS,
  logTimeOf,
  type RequestLogEntry,
  STATUS_CLASSES,
  UUID,
} from './model.js';
import { decodeZ85 } from './z85.js';

/*
 * Reading request logs: a log line parsed back (the writer), the log routes' query and answers.
 * Apart from request-logs.ts, which every API function loads to write its line: zod builds these
 * schemas when their module loads, and only the log routes and the writer use them.
 */

const lineSchema = z.object({
  [LOG_LINE_MARKER]: z.literal(LOG_LINE_TYPE),
  id: z.string().check(z.regex(UUID)),
  /** Absent: the id's own time (model.ts logTimeOf). */
  created_at: z.optional(z.string()),
  method: z.string(),
  endpoint: z.string(),
  response_status: z.number().check(z.int()),
  user_agent: z.nullable(z.string()),
  api_key_id: z.nullable(z.string()),
  duration_ms: z.number(),
  request_body: z.optional(z.nullable(z.string())),
  response_body: z.optional(z.nullable(z.string())),
  /** The two bodies compressed (model.ts LOG_LINE_COMPRESS_ABOVE), in place of the two fields. */
  bodies: z.optional(z.string()),
});

const bodyText = z.nullable(z.string());
const bodiesSchema = z.tuple([bodyText, bodyText]);
/** Bodies are capped (8 KB each) before they are compressed: anything inflating past this is not ours. */
const MAX_BODIES_BYTES = 256 * 1024;

function bodiesOf(data: z.infer<typeof lineSchema>): [string | null, string | null] | null {
  if (data.bodies === undefined) return [data.request_body ?? null, data.response_body ?? null];
  try {
    const text = brotliDecompressSync(decodeZ85(data.bodies), {
      maxOutputLength: MAX_BODIES_BYTES,
    }).toString('utf8');
    const parsed = bodiesSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

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
  const bodies = bodiesOf(result.data);
  if (!bodies) return null;
  const { [LOG_LINE_MARKER]: _marker, bodies: _bodies, ...entry } = result.data;
  return {
    ...entry,
    created_at: entry.created_at ?? logTimeOf(entry.id),
    request_body: bodies[0],
    response_body: bodies[1],
  } as RequestLogEntry;
}

// The API: the list's query, and the answers (exported for the OpenAPI document).

const logIdCursor = (field: string) =>
  z.optional(z.string().check(z.refine(isLogId, `${field} must be a log id (a UUID) from a listed log`)));

/** Longest `path` and `api_key_id` filter taken (an endpoint is kept up to 2 KB). */
const MAX_PATH_FILTER = 2048;
const MAX_KEY_ID_FILTER = 128;

/**
 * `GET /v1/logs`: `limit` (1–100, default 20), a cursor (`after` or `before`, a log id), `status`
 * (2xx, 3xx, 4xx, 5xx), and ours: `method` (any case), `path` (the endpoint starts with it) and
 * `api_key_id` (the key that made the request).
 */
export const listLogsQuerySchema = z.pipe(
  z
    .strictObject({
      limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
      after: logIdCursor('after'),
      before: logIdCursor('before'),
      status: z.optional(
        z.enum(STATUS_CLASSES, { error: `status must be one of ${STATUS_CLASSES.join(', ')}` }),
      ),
      method: z.optional(
        z.pipe(
          z.pipe(
            z.string(),
            z.transform((s: string) => s.toUpperCase()),
          ),
          z.enum(LOG_METHODS, { error: `method must be one of ${LOG_METHODS.join(', ')}` }),
        ),
      ),
      path: z.optional(
        z.string().check(
          z.refine((s) => s.startsWith('/'), 'path must start with / (for example /v1/emails)'),
          z.maxLength(MAX_PATH_FILTER, `path must be at most ${MAX_PATH_FILTER} characters`),
        ),
      ),
      api_key_id: z.optional(
        z
          .string()
          .check(
            z.minLength(1, 'api_key_id must not be empty'),
            z.maxLength(MAX_KEY_ID_FILTER, `api_key_id must be at most ${MAX_KEY_ID_FILTER} characters`),
          ),
      ),
    })
    .check(
      z.superRefine((query, ctx) => {
        const q = query as { after?: string; before?: string };
        if (q.after !== undefined && q.before !== undefined) ctx.issues.push(bothCursors(q.before));
      }),
    ),
  z.transform((query) => ({ ...query, offset: 0 })),
);

export type { ListLogsQuery } from './ports.js';

const logFields = {
  id: z.string(),
  created_at: z.string(),
  endpoint: z.string(),
  method: z.enum(LOG_METHODS),
  response_status: z.number().check(z.int()),
  user_agent: z.nullable(z.string()),
  /** Ours: the key that made the request (null: no valid key). */
  api_key_id: z.nullable(z.string()),
  /** Ours: that key's name now (null: no key, or a key deleted since). */
  api_key_name: z.nullable(z.string()),
  /** Ours: how long the handler took, in milliseconds. */
  duration_ms: z.number(),
};

/** One log in a list (Resend's LogSummary, and our api_key_id, api_key_name and duration_ms). */
export const logSummarySchema = z.object(logFields);

/** `GET /v1/logs`'s answer (Resend's ListLogsResponse). */
export const logListResponseSchema = z.object({
  object: z.literal('list'),
  has_more: z.boolean(),
  data: z.array(logSummarySchema),
  /**
   * Ours, only when a filtered page stopped at its read bound before it was full: the id of the
   * last log read, to pass as `after` (or `before`, paging that way) to read on.
   */
  scanned_to: z.optional(z.string()),
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

/** A log's summary; `names`: the keys' names by id (a key not in it: deleted, its name null). */
export const toLogSummary = (entry: RequestLogEntry, names?: ReadonlyMap<string, string>): LogSummary => ({
  id: entry.id,
  created_at: entry.created_at,
  endpoint: entry.endpoint,
  method: entry.method as LogSummary['method'],
  response_status: entry.response_status,
  user_agent: entry.user_agent,
  api_key_id: entry.api_key_id,
  api_key_name: entry.api_key_id === null ? null : (names?.get(entry.api_key_id) ?? null),
  duration_ms: entry.duration_ms,
});

const parsedBody = (text: string | null): Record<string, unknown> | null =>
  text === null ? null : (JSON.parse(text) as Record<string, unknown>);

export const toLogResponse = (entry: RequestLogEntry, names?: ReadonlyMap<string, string>): LogResponse => ({
  object: 'log',
  ...toLogSummary(entry, names),
  request_body: parsedBody(entry.request_body),
  response_body: parsedBody(entry.response_body),
});
