import { createHash } from 'node:crypto';
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { log as defaultLog } from '../observability/logger.js';
import { observe } from '../observability/middleware.js';
import { onLambda } from '../shared/config.js';
import { ApiError, internalError, notFound } from '../shared/errors.js';
import type { BuiltPage } from '../shared/page.js';
import type { Log } from '../shared/ports.js';
import { errorResponse, type HttpEvent, type HttpResponse, lazyHttpHandler } from './middleware.js';

export interface PublicDeps {
  log?: Log;
}

export type { BuiltPage } from '../shared/page.js';

/**
 * The headers of a public page: no framing, no sniffing, no referrer; an HTML page may load nothing
 * but its own inline style (by hash: no script at all, no other origin). On AWS, HSTS too (the API is
 * HTTPS only; the local service is HTTPS on localhost, where a browser-wide HSTS entry would outlive it).
 */
export function publicHeaders(page: BuiltPage, etag: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': page.contentType,
    'cache-control': page.cacheControl ?? 'public, max-age=300',
    etag,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'content-security-policy':
      page.contentSecurityPolicy ??
      [
        "default-src 'none'",
        ...(page.styleHashes?.length ? [`style-src ${page.styleHashes.join(' ')}`] : []),
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
      ].join('; '),
  };
  if (onLambda()) headers['strict-transport-security'] = 'max-age=31536000; includeSubDomains';
  return headers;
}

const etagOf = (page: BuiltPage) =>
  page.etag ?? `"${createHash('sha256').update(page.body).digest('base64url').slice(0, 27)}"`;

/** The middleware chain of every public route: observed, errors in the one shape, the front door. */
function publicChain(deps: PublicDeps, answer: (event: HttpEvent) => HttpResponse | Promise<HttpResponse>) {
  const log = deps.log ?? defaultLog;
  const chain = middy<HttpEvent, HttpResponse, Error, Context>()
    .use(observe() as MiddlewareObj<HttpEvent, HttpResponse, Error, Context>)
    .use({
      onError: async (request) => {
        const error = request.error;
        if (error instanceof ApiError) request.response = errorResponse(error);
        else {
          log.error('public page failed', { error });
          request.response = errorResponse(internalError());
        }
      },
    });
  return chain.handler(async (event) => answer(event));
}

/**
 * A public route's handler (`permission: 'public'`): no key, no request input read, no table,
 * nothing but the page built into the service, built once per instance on first use. Behind the
 * front door it answers only requests that came through it, as every route does.
 */
export function publicHandler(deps: PublicDeps, build: () => BuiltPage | Promise<BuiltPage>) {
  let page: Promise<{ page: BuiltPage; etag: string }> | undefined;
  return publicChain(deps, async () => {
    page ??= Promise.resolve(build()).then((built) => ({ page: built, etag: etagOf(built) }));
    // A build that failed is tried again by the next request.
    const built = await page.catch((error: unknown) => {
      page = undefined;
      throw error;
    });
    return { statusCode: 200, headers: publicHeaders(built.page, built.etag), body: built.page.body };
  });
}

/**
 * A public route that serves one of a set of files built into the service, by the name in its path
 * (`{file}`, the only input it reads); any other name is a 404 in the error shape.
 */
export function publicFileHandler(deps: PublicDeps, fileOf: (name: string) => BuiltPage | undefined) {
  return publicChain(deps, (event) => {
    const name = event.pathParameters?.file ?? '';
    const file = fileOf(name);
    if (!file) throw notFound('No such file.');
    return { statusCode: 200, headers: publicHeaders(file, etagOf(file)), body: file.body };
  });
}

export { lazyHttpHandler as lazyPublicHandler };
