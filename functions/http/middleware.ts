import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { type ApiKey, hashToken, looksLikeToken } from '../core/api-keys.js';
import { ApiError, type FieldError, internalError, validationError } from '../core/errors.js';
import type { ApiKeyRepository } from '../core/ports.js';
import { log as defaultLog, type Logger } from './log.js';

/** Largest request body accepted (bytes). Keeps every email's bodies inside one DynamoDB item. */
export const MAX_BODY_BYTES = 256 * 1024;

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResponse = APIGatewayProxyStructuredResultV2;

export interface HttpDeps {
  apiKeys: ApiKeyRepository;
  log?: { info: Logger; error: Logger };
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

type Request = middy.Request<HttpEvent, HttpResponse, Error, Context & { apiKey?: ApiKey }>;

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
const errorResponder = (logger: Logger): MiddlewareObj<HttpEvent, HttpResponse> => ({
  onError: async (request) => {
    const error = request.error as (Error & { statusCode?: number; expose?: boolean }) | null;
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error?.statusCode === 415 && error.expose) {
      // @middy/http-json-body-parser: the body is not JSON.
      apiError = validationError('The request body is not valid JSON.');
    } else {
      logger('unhandled error', {
        requestId: request.context.awsRequestId,
        error: error?.name,
        detail: error?.message,
        stack: error?.stack,
      });
      apiError = internalError();
    }
    request.response = errorResponse(apiError);
  },
});

/** Refuses oversized bodies before any other work (no parsing, no key lookup). */
const bodyLimit = (): MiddlewareObj<HttpEvent, HttpResponse> => ({
  before: async ({ event }) => {
    if (event.body === undefined) return;
    const bytes = event.isBase64Encoded
      ? Math.floor((event.body.length * 3) / 4)
      : Buffer.byteLength(event.body);
    if (bytes > MAX_BODY_BYTES) {
      throw new ApiError(
        413,
        'payload_too_large',
        `The request body is ${bytes} bytes; the limit is ${MAX_BODY_BYTES} bytes.`,
      );
    }
  },
});

/** `Authorization: Bearer <key>`: the key is hashed and looked up; only the hash is ever stored. */
const authenticate = (apiKeys: ApiKeyRepository): MiddlewareObj<HttpEvent, HttpResponse> => ({
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
    const key = await apiKeys.findByHash(hashToken(token));
    if (!key) throw invalid;
    request.context.apiKey = key;
  },
});

/** JSON bodies: a missing Content-Type is taken as JSON; another media type is refused. */
const requireJson = (): MiddlewareObj<HttpEvent, HttpResponse> => ({
  before: async ({ event }) => {
    event.headers ??= {};
    const headers = event.headers;
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
 * The one HTTP middleware chain: error shape, size limit, authentication, JSON parsing, then the
 * endpoint's own function, which returns a status code and a body.
 */
export function httpHandler(
  deps: HttpDeps,
  options: { jsonBody?: boolean },
  run: (request: HttpRequest) => Promise<HttpResult>,
) {
  const logger = deps.log ?? defaultLog;
  const chain = middy<HttpEvent, HttpResponse, Error, Context & { apiKey?: ApiKey }>()
    .use(errorResponder(logger.error))
    .use(bodyLimit())
    .use(authenticate(deps.apiKeys));
  if (options.jsonBody) chain.use(requireJson()).use(httpJsonBodyParser());
  return chain.handler(async (event, context) => {
    const result = await run({
      event,
      body: event.body,
      query: (event.queryStringParameters ?? {}) as Record<string, string>,
      params: (event.pathParameters ?? {}) as Record<string, string>,
      apiKey: context.apiKey as ApiKey,
    });
    return jsonResponse(result.statusCode, result.body, result.headers);
  });
}

/** Validates input with a zod schema; failures become a 400 that names each offending field. */
export function parseInput<S extends z.ZodMiniType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields: FieldError[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        fields.push({ field: [...issue.path, key].join('.'), message: 'unknown field' });
    } else {
      fields.push({ field: issue.path.join('.') || '(body)', message: issue.message });
    }
  }
  const message = fields
    .map((f) => (f.field === '(body)' ? f.message : `${f.field}: ${f.message}`))
    .join('; ');
  throw validationError(`Invalid request: ${message}`, fields);
}

/**
 * The exported Lambda handler of an HTTP function: builds it (clients, configuration) on first use,
 * and if that fails, for instance a missing environment variable, still answers in the error shape
 * (a 500 without details) and tries again on the next request.
 */
export function lazyHttpHandler(
  build: () => (event: HttpEvent, context: Context) => Promise<HttpResponse>,
): (event: HttpEvent, context: Context) => Promise<HttpResponse> {
  let built: ((event: HttpEvent, context: Context) => Promise<HttpResponse>) | undefined;
  return async (event, context) => {
    try {
      built ??= build();
    } catch (error) {
      defaultLog.error('handler setup failed', { error: String(error) });
      return errorResponse(internalError());
    }
    return built(event, context);
  };
}
