import type { Context } from 'aws-lambda';
import type { ApiKey } from '../api-keys/model.js';
import {
  bodyForLog,
  headerForLog,
  isLogMethod,
  LOG_ENDPOINT_MAX_BYTES,
  LOG_USER_AGENT_MAX_BYTES,
  logIdOf,
  type RequestLogSink,
  requestLogLine,
} from '../request-logs/model.js';
import type { Log } from '../shared/ports.js';
import type { HttpEvent, HttpResponse } from './event.js';

/** What the middleware chain leaves on the invocation's context for the request's log. */
export interface LoggedContext {
  /** The key that authenticated the request (set once it is known, even for a 429). */
  apiKey?: ApiKey;
  /** The answer's body before serialization (the handler's result or the error shape). */
  responseBody?: unknown;
}

/** A body sent as text (routes that do not parse JSON, or a parse that failed) is tried as JSON up to this size. */
const MAX_REPARSE_BYTES = 64 * 1024;

function requestBodyOf(event: HttpEvent): unknown {
  const body: unknown = event.body;
  if (typeof body !== 'string' || body === '') return body;
  const bytes = event.isBase64Encoded ? Math.floor((body.length * 3) / 4) : body.length;
  if (bytes > MAX_REPARSE_BYTES) return body;
  const text = event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Wraps an HTTP function so that every request it answers is written to the request logs: once
 * the answer is ready, one line (request-logs/model.ts: redacted, bodies capped) goes to the sink,
 * synchronously, and the answer is returned. Nothing is awaited for the log, and a failure to
 * build or write the line is logged (without the line) and never changes the answer.
 * `bodies: false` (the stack's requestLogBodies): the line has both bodies null, and no part of
 * either is read, so none can reach the log group or the table.
 */
export function withRequestLog(
  sink: RequestLogSink,
  log: Log,
  answer: (event: HttpEvent, context: Context & LoggedContext) => Promise<HttpResponse>,
  options: { bodies?: boolean } = {},
): (event: HttpEvent, context: Context) => Promise<HttpResponse> {
  const bodies = options.bodies !== false;
  return async (event, context) => {
    const started = performance.now();
    const at = Date.now();
    const logged = context as Context & LoggedContext;
    // A context used for more than one invocation (tests) carries nothing over.
    Object.assign(logged, { apiKey: undefined, responseBody: undefined });
    const response = await answer(event, logged);
    try {
      const { method, path } = event.requestContext.http;
      // Resend's log has one of its methods: a HEAD or TRACE to an unknown path (answered by the
      // fallback all the same) is not kept, rather than listed with a method its clients refuse.
      if (isLogMethod(method.toUpperCase())) {
        const userAgent = event.headers?.['user-agent'];
        const entry = {
          id: logIdOf(context.awsRequestId, at),
          created_at: new Date(at).toISOString(),
          method: method.toUpperCase(),
          endpoint: headerForLog(path, LOG_ENDPOINT_MAX_BYTES),
          response_status: response.statusCode ?? 200,
          user_agent: userAgent ? headerForLog(userAgent, LOG_USER_AGENT_MAX_BYTES) : null,
          api_key_id: logged.apiKey?.id ?? null,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
          request_body: bodies ? bodyForLog(requestBodyOf(event)) : null,
          response_body: bodies ? bodyForLog(logged.responseBody) : null,
        };
        sink.write(requestLogLine(entry));
      }
    } catch (error) {
      log.warn('could not write the request log', { error_name: (error as Error)?.name });
    }
    return response;
  };
}
