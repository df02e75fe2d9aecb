import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { log as defaultLog } from '../observability/logger.js';
import { observe } from '../observability/middleware.js';
import { onLambda } from '../shared/config.js';
import type { Log } from '../shared/ports.js';
import type { RouteDeclaration } from '../shared/route.js';
import type { HttpEvent, HttpResponse } from './event.js';

/**
 * The chain of a `token` route (shared/route.ts): no key, no rate limit of a key, no request log
 * (it has no key to log under); the token in its path is the credential, which the route's own
 * function looks up by its hash and throttles. It answers an HTML page under the page's own
 * Content-Security-Policy, never cached, never framed, and never sending its address (which holds
 * the token) as a referrer.
 */

export interface TokenPage {
  statusCode: number;
  /** The page's HTML. */
  body: string;
  headers?: Record<string, string>;
}

export interface TokenPageDeps {
  log?: Log;
}

export function tokenPageHeaders(contentSecurityPolicy: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': contentSecurityPolicy,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'x-robots-tag': 'noindex',
  };
  if (onLambda()) headers['strict-transport-security'] = 'max-age=31536000; includeSubDomains';
  return headers;
}

/**
 * A token route's handler: `run` gets the token (the path's `{token}`) and answers a page; an
 * error it throws is logged and answered with `failed` (a 500 page), in the same headers.
 */
export function tokenPageHandler(
  deps: TokenPageDeps,
  route: Pick<RouteDeclaration, 'handler' | 'permission'>,
  options: { contentSecurityPolicy: string; failed: () => string },
  run: (token: string, event: HttpEvent) => Promise<TokenPage>,
): (event: HttpEvent, context: Context) => Promise<HttpResponse> {
  if (route.permission !== 'token') throw new Error(`${route.handler} is not a token route`);
  const log = deps.log ?? defaultLog;
  const headers = tokenPageHeaders(options.contentSecurityPolicy);
  return middy<HttpEvent, HttpResponse, Error, Context>()
    .use(observe() as MiddlewareObj<HttpEvent, HttpResponse, Error, Context>)
    .use({
      onError: async (request) => {
        log.error('token page failed', { error: request.error });
        request.response = { statusCode: 500, headers, body: options.failed() };
      },
    })
    .handler(async (event) => {
      const page = await run(event.pathParameters?.token ?? '', event);
      return { statusCode: page.statusCode, headers: { ...headers, ...page.headers }, body: page.body };
    });
}
