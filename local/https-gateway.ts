import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { errorResponse } from '../functions/http/middleware.js';
import { FALLBACK_HANDLER, findRoute } from '../functions/routes.js';
import { ApiError } from '../functions/shared/errors.js';
import { invoke } from './invocation.js';
import { lambdaContext } from './lambda-context.js';
import type { TlsMaterial } from './tls.js';

export type HttpLambda = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway's own payload limit; our handlers enforce the (smaller) documented one. */
const GATEWAY_MAX_BYTES = 10 * 1024 * 1024;

/** API Gateway (HTTP API) quota: the request line and header values together, at most 10,240 bytes. */
export const GATEWAY_MAX_HEADER_BYTES = 10_240;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * What Node's HTTP parser refuses before any handler runs (headers over the limit, a request that
 * is not HTTP), answered in the API's one error shape instead of Node's empty-bodied default.
 */
function parserRejection(error: NodeJS.ErrnoException): string {
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError(
          431,
          'request_header_fields_too_large',
          `The request line and headers are over ${GATEWAY_MAX_HEADER_BYTES} bytes, API Gateway's limit.`,
        )
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError(408, 'request_timeout', 'The request was not received in full in time.')
        : new ApiError(400, 'validation_error', 'The request is not valid HTTP/1.1.');
  const body = JSON.stringify(apiError.toBody());
  return [
    `HTTP/1.1 ${apiError.statusCode} ${REASONS[apiError.statusCode]}`,
    'content-type: application/json; charset=utf-8',
    'cache-control: no-store',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * With CONTRACT_RECORD set (the tests set it: test/support/contract.ts), every answer is appended
 * to that file as a JSON line, and checked there against the OpenAPI document after the test file.
 */
function recordAnswer(
  method: string,
  url: string,
  routeKey: string,
  result: APIGatewayProxyStructuredResultV2,
): void {
  const file = process.env.CONTRACT_RECORD;
  if (!file) return;
  const headers = (result.headers ?? {}) as Record<string, unknown>;
  const line = {
    method,
    path: url.split('?')[0],
    routeKey,
    status: result.statusCode ?? 200,
    contentType: String(headers['content-type'] ?? ''),
    body: result.isBase64Encoded ? '' : (result.body ?? ''),
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** One answer of the gateway, as npm start prints it (never a header, a query or a body: no key, no address). */
export interface GatewayAnswer {
  method: string;
  /** The request's path, without its query. */
  path: string;
  status: number;
  durationMs: number;
  /** The `apigw-requestid` it answered with. */
  requestId: string;
}

/**
 * A local stand-in for the HTTP API: HTTPS only, routes from the same route table the stack uses,
 * each request turned into an API Gateway v2 (payload format 2.0) event for that route's handler.
 */
export async function startHttpsGateway(options: {
  tls: TlsMaterial;
  port: number;
  handlers: Record<string, HttpLambda>;
  fallback: HttpLambda;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Told of every answer, once sent (npm start prints a line each). */
  onAnswer?: (answer: GatewayAnswer) => void;
}): Promise<{ port: number; stop(): Promise<void> }> {
  const server: Server = createServer(
    {
      key: options.tls.key,
      cert: options.tls.cert,
      maxHeaderSize: GATEWAY_MAX_HEADER_BYTES,
      // Node would answer a request without Host itself, with an empty 400; ours says why, in our shape.
      requireHostHeader: false,
    },
    async (req, res) => {
      const requestId = randomUUID();
      const started = performance.now();
      let routeKey = '';
      const send = (result: APIGatewayProxyStructuredResultV2) => {
        recordAnswer(req.method ?? '', req.url ?? '', routeKey, result);
        options.onAnswer?.({
          method: req.method ?? '',
          // A link's token is its credential: the line shows the route's template, not the token.
          path: routeKey.includes('{token}')
            ? (routeKey.split(' ')[1] ?? '')
            : ((req.url ?? '').split('?')[0] ?? ''),
          status: result.statusCode ?? 200,
          durationMs: Math.round(performance.now() - started),
          requestId,
        });
        const headers: Record<string, string | number | boolean> = {
          ...(result.headers ?? {}),
          'apigw-requestid': requestId,
        };
        const body = result.body ?? '';
        const buffer = result.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body);
        res.writeHead(result.statusCode ?? 200, { ...headers, 'content-length': buffer.length });
        res.end(buffer);
      };
      try {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of req) {
          size += (chunk as Buffer).length;
          if (size > GATEWAY_MAX_BYTES) {
            send(errorResponse(new ApiError(413, 'payload_too_large', 'The request body is over 10 MB.')));
            req.destroy();
            return;
          }
          chunks.push(chunk as Buffer);
        }
        let url: URL;
        try {
          url = new URL(req.url ?? '/', 'https://localhost');
        } catch {
          send(
            errorResponse(new ApiError(400, 'validation_error', 'The request target is not a valid URL.')),
          );
          return;
        }
        const method = (req.method ?? 'GET').toUpperCase();
        const match = findRoute(method, url.pathname);
        const queryStringParameters: Record<string, string> = {};
        for (const key of new Set(url.searchParams.keys())) {
          queryStringParameters[key] = url.searchParams.getAll(key).join(',');
        }
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
        }
        const body = Buffer.concat(chunks);
        routeKey = match ? `${match.route.method} ${match.route.path}` : '$default';
        const now = new Date();
        const binary = /^multipart\//i.test(headers['content-type'] ?? '');
        const event: APIGatewayProxyEventV2 = {
          version: '2.0',
          routeKey,
          rawPath: url.pathname,
          rawQueryString: url.search.slice(1),
          headers,
          ...(Object.keys(queryStringParameters).length ? { queryStringParameters } : {}),
          ...(match && Object.keys(match.params).length ? { pathParameters: match.params } : {}),
          requestContext: {
            accountId: '000000000000',
            apiId: 'local',
            domainName: headers.host ?? 'localhost',
            domainPrefix: 'localhost',
            http: {
              method,
              path: url.pathname,
              protocol: `HTTP/${req.httpVersion}`,
              sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
              userAgent: headers['user-agent'] ?? '',
            },
            requestId,
            routeKey,
            stage: '$default',
            time: now.toUTCString(),
            timeEpoch: now.getTime(),
          },
          // As API Gateway's HTTP APIs: a body whose type is not text (a multipart form and its
          // files) comes base64-encoded, so its bytes reach the function unchanged.
          ...(body.length ? { body: body.toString(binary ? 'base64' : 'utf8') } : {}),
          isBase64Encoded: binary && body.length > 0,
        };
        const functionName = match?.route.handler ?? FALLBACK_HANDLER;
        const handler = match ? options.handlers[match.route.handler] : options.fallback;
        if (!handler) throw new Error(`no handler loaded for ${routeKey}`);
        send(await invoke(functionName, () => handler(event, lambdaContext(functionName, 10_000))));
      } catch (error) {
        options.log?.('gateway error', { error: String(error) });
        send(
          errorResponse(
            new ApiError(
              500,
              'internal_server_error',
              'An unexpected error occurred. Please try again later.',
            ),
          ),
        );
      }
    },
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // A response already under way on this connection must not get bytes written into it.
    const responding = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || responding) {
      socket.destroy();
      return;
    }
    socket.end(parserRejection(error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
