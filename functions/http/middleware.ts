import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Context } from 'aws-lambda';
import { CONSOLE_RATE_LIMIT, CONSOLE_REQUEST_HEADER } from '../api-keys/console-budget.js';
import { type ApiKey, hashToken, looksLikeToken, permits, restricted } from '../api-keys/model.js';
import type { ApiKeyRepository } from '../api-keys/ports.js';
import { KeyRateLimiter, rateLimitExceeded, rateLimitHeaders } from '../api-keys/rate-limit.js';
import { log as defaultLog } from '../observability/logger.js';
import { counters as defaultCounters } from '../observability/metrics.js';
import { observe } from '../observability/middleware.js';
import type { RequestLogSink } from '../request-logs/model.js';
import { onLambda } from '../shared/config.js';
import { ApiError, internalError, validationError } from '../shared/errors.js';
import { MAX_EMAIL_BYTES } from '../shared/limits.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { RouteDeclaration } from '../shared/route.js';
import type { HttpEvent, HttpResponse } from './event.js';
import { type LoggedContext, withRequestLog } from './request-log.js';

/** Largest request body accepted (bytes). Keeps every email's bodies inside one DynamoDB item. */
export const MAX_BODY_BYTES = MAX_EMAIL_BYTES;

/** Deepest JSON nesting accepted; an email needs 3 levels. Deeper bodies are refused unparsed. */
export const MAX_JSON_DEPTH = 32;

/** Without a rate limit, `last_used_at` is written at most this often per key (with one, every request's write records it). */
export const LAST_USED_RESOLUTION_MS = 60_000;

export type { HttpEvent, HttpResponse } from './event.js';

export interface HttpDeps {
  apiKeys: ApiKeyRepository;
  /** Per-key rate limiting: the requests per second allowed, counted on the key's item. None: no limit. */
  rateLimit?: { perSecond: number };
  clock?: Clock;
  log?: Log;
  counters?: Counters;
  /** Where each answered request's log line goes (http/request-log.ts). None: requests are not logged. */
  requestLog?: RequestLogSink;
  /** False: the log lines carry no bodies (the stack's requestLogBodies). @default true */
  requestLogBodies?: boolean;
}

export interface HttpRequest {
  event: HttpEvent;
  body: unknown;
  query: Record<string, string>;
  params: Record<string, string>;
  apiKey: ApiKey;
}

export interface HttpResult {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface HttpContext extends Context, LoggedContext {
  apiKey?: ApiKey;
  /** Rate-limit headers of this request, added to every response once the key is known. */
  rateHeaders?: Record<string, string>;
}

type Request = middy.Request<HttpEvent, HttpResponse, Error, HttpContext>;

const BASE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

export const jsonResponse = (
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponse => ({
  statusCode,
  headers: { ...BASE_HEADERS, ...headers },
  body: JSON.stringify(body),
});

export const errorResponse = (error: ApiError): HttpResponse =>
  jsonResponse(error.statusCode, error.toBody(), { ...error.headers });

/** Turns any error into the one error shape; unexpected ones become a 500 without details. */
const errorResponder = (log: Log): MiddlewareObj<HttpEvent, HttpResponse> => ({
  onError: async (request) => {
    const error = request.error as (Error & { statusCode?: number; expose?: boolean }) | null;
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error?.statusCode === 415 && error.expose) {
      // @middy/http-json-body-parser: the body is not JSON.
      apiError = validationError('The request body is not valid JSON.');
    } else {
      // The Error itself: the logger keeps its name, message, stack and cause (and the request id).
      log.error('unhandled error', { error });
      apiError = internalError();
    }
    const response = errorResponse(apiError);
    response.headers = { ...response.headers, ...(request.context as HttpContext).rateHeaders };
    (request.context as HttpContext).responseBody = apiError.toBody();
    request.response = response;
  },
});

/** How deep brackets nest in a JSON text, stopping early once past `max` (strings are skipped). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

/** A size as people read it: `4.5 MB` (decimal megabytes, as API Gateway's and Lambda's limits are given). */
const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

/** Refuses oversized and too deeply nested bodies before any other work (no parsing, no key lookup). */
const bodyLimit = (maxBytes: number, json = true): MiddlewareObj<HttpEvent, HttpResponse> => ({
  before: async ({ event }) => {
    if (event.body === undefined) return;
    const bytes = event.isBase64Encoded
      ? Math.floor((event.body.length * 3) / 4)
      : Buffer.byteLength(event.body);
    if (bytes > maxBytes) {
      throw new ApiError(
        413,
        'payload_too_large',
        `The request body is ${bytes} bytes (${megabytes(bytes)}); the limit is ${maxBytes} bytes (${megabytes(maxBytes)}).`,
      );
    }
    // A form's file is not JSON: its depth is its own (a JSON body in its place is checked when read).
    if (!json) return;
    const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      throw validationError(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    }
  },
});

/**
 * `Authorization: Bearer <key>`: the key is hashed and looked up; only the hash is ever stored.
 * With a rate limit, the lookup is one conditional write to one of the key's rate shards that also
 * counts the request in its one-second window (shared by every instance) and records
 * `last_used_at`: no read (a second write only when that shard refuses; see api-keys/rate-limit.ts).
 * Then the route's permission is checked.
 */
const authenticate = (
  deps: HttpDeps,
  permission: ApiKey['permission'] | undefined,
): MiddlewareObj<HttpEvent, HttpResponse> => {
  // One per handler, so per function instance: it remembers keys refused for the rest of a window.
  // The console's requests (marked by their header) count on a budget of their own beside the key's:
  // a person browsing never takes an application's rate (api-keys/console-budget.ts).
  const limiters = deps.rateLimit && [
    new KeyRateLimiter(deps.apiKeys, deps.rateLimit.perSecond),
    // One shard (5 a second): no shard to pick at random. Never more than the key's own limit, so
    // the header cannot lift a key set below 5 a second.
    new KeyRateLimiter(deps.apiKeys, Math.min(CONSOLE_RATE_LIMIT, deps.rateLimit.perSecond), () => 0, true),
  ];
  return {
    before: async (request: Request) => {
      const header = request.event.headers?.authorization;
      if (!header?.trim()) {
        throw new ApiError(
          401,
          'missing_api_key',
          'Missing API key. Send it in the header `Authorization: Bearer <API_KEY>`.',
        );
      }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
      const token = match?.[1];
      // One answer for malformed, unknown and revoked keys: a caller learns nothing about which keys exist.
      const invalid = new ApiError(401, 'invalid_api_key', 'API key is invalid.');
      if (!token || !looksLikeToken(token)) throw invalid;
      const hash = hashToken(token);
      const now = (deps.clock?.now() ?? new Date()).getTime();
      let key: ApiKey | null;
      if (limiters) {
        // A table that cannot take the write for another reason than the key's own load cannot tell
        // whether the key exists: a 500, as a failed lookup always was.
        const limiter = limiters[request.event.headers?.[CONSOLE_REQUEST_HEADER] ? 1 : 0] as KeyRateLimiter;
        const admitted = await limiter.admit(hash, now);
        if (admitted.key === null) throw invalid;
        if (admitted.key) request.context.apiKey = admitted.key;
        request.context.rateHeaders = rateLimitHeaders(admitted.state);
        if (!admitted.state.allowed || !admitted.key) {
          (deps.counters ?? defaultCounters).count('RateLimited');
          throw rateLimitExceeded(admitted.state);
        }
        key = admitted.key;
      } else {
        key = await deps.apiKeys.findByHash(hash);
        if (!key) throw invalid;
        request.context.apiKey = key;
        if (!key.last_used_at || now - Date.parse(key.last_used_at) >= LAST_USED_RESOLUTION_MS)
          await deps.apiKeys.touch(key.hash, new Date(now).toISOString()).catch(() => undefined);
      }
      if (permission && !permits(key, permission)) {
        const { method, path } = request.event.requestContext.http;
        throw restricted(
          `This API key has sending_access: it may only send emails. ${method} ${path} needs ${permission}.`,
        );
      }
    },
  };
};

/** JSON bodies: a missing Content-Type is taken as JSON; another media type is refused. `optional`: no body is `{}`. */
const requireJson = (optional = false): MiddlewareObj<HttpEvent, HttpResponse> => ({
  before: async ({ event }) => {
    event.headers ??= {};
    const headers = event.headers;
    if (optional && (event.body === undefined || event.body === '')) {
      event.body = '{}';
      event.isBase64Encoded = false;
    }
    const type = headers['content-type'];
    if (type === undefined) headers['content-type'] = 'application/json';
    else if (!/^application\/(.+\+)?json\s*($|;)/i.test(type)) {
      throw validationError(`Content-Type must be application/json (got "${type}").`);
    }
    if (event.body === undefined || event.body === '')
      throw validationError('The request body is missing; send a JSON object.');
  },
});

/**
 * What the chain reads of a route's declaration (shared/route.ts): who may call it, the body it
 * takes, whether it is logged. The fallback has no permission of its own: a valid key is enough to
 * be told 404 or 405.
 */
export type HandledRoute = Pick<RouteDeclaration, 'handler' | 'body' | 'logged'> & {
  readonly permission?: RouteDeclaration['permission'];
};

/**
 * The one HTTP middleware chain: error shape, size limit, authentication and the route's
 * permission, JSON parsing, then the endpoint's own function, which returns a status code and a
 * body. `route`: the handler's own declaration (its concept's routes.ts).
 */
export function httpHandler(
  deps: HttpDeps,
  route: HandledRoute,
  run: (request: HttpRequest) => Promise<HttpResult>,
): (event: HttpEvent, context: Context) => Promise<HttpResponse> {
  const log = deps.log ?? defaultLog;
  const { permission } = route;
  if (permission === 'public' || permission === 'token')
    throw new Error(`${route.handler} is a ${permission} route: it is served by its own chain`);
  const chain = middy<HttpEvent, HttpResponse, Error, HttpContext>()
    .use(observe() as MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext>)
    .use(errorResponder(log));
  // What the front door refused (its authorizer, in API Gateway) never reaches a function: every
  // request that reaches one is logged.
  const multipart = route.body?.type === 'multipart';
  chain
    .use(bodyLimit(route.body?.maxBytes ?? MAX_BODY_BYTES, !multipart))
    .use(authenticate(deps, permission));
  if (route.body?.type === 'json')
    chain.use(requireJson(route.body.optional === true)).use(httpJsonBodyParser());
  const answer = chain.handler(async (event, context) => {
    const result = await run({
      event,
      // The form reader is loaded by the routes that take a form only (a chunk of its own).
      body: multipart ? await (await import('./multipart.js')).readForm(event) : event.body,
      query: (event.queryStringParameters ?? {}) as Record<string, string>,
      params: (event.pathParameters ?? {}) as Record<string, string>,
      apiKey: context.apiKey as ApiKey,
    });
    context.responseBody = result.body;
    return jsonResponse(result.statusCode, result.body, { ...result.headers, ...context.rateHeaders });
  });
  if (!deps.requestLog || route.logged === false)
    return (event, context) => answer(event, context as HttpContext);
  return withRequestLog(deps.requestLog, log, (event, context) => answer(event, context as HttpContext), {
    bodies: deps.requestLogBodies !== false,
  });
}

/** Input validation, for the handlers: the one shared rule (shared/parse.ts). */
export { parseInput } from '../shared/parse.js';

/**
 * The exported Lambda handler of an HTTP function. On Lambda it is built (clients, configuration)
 * during the function's init, so a setting that is missing or invalid fails the init with a message
 * naming it (config.ts, ConfigurationError) instead of every request answering 500. Elsewhere (the
 * tests, the local runtime, which checks every function's settings when it starts) it is built on
 * first use; if that fails it still answers in the error shape (a 500 without details) and tries
 * again on the next request.
 */
export function lazyHttpHandler(
  build: () => (event: HttpEvent, context: Context) => Promise<HttpResponse>,
): (event: HttpEvent, context: Context) => Promise<HttpResponse> {
  let built: ((event: HttpEvent, context: Context) => Promise<HttpResponse>) | undefined = onLambda()
    ? build()
    : undefined;
  return async (event, context) => {
    try {
      built ??= build();
    } catch (error) {
      defaultLog.error('handler setup failed', { error });
      return errorResponse(internalError());
    }
    return built(event, context);
  };
}
