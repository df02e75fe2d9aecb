import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { allowedMethods, FALLBACK_HANDLER } from '../routes.js';
import { ApiError } from '../shared/errors.js';
import { apiDeps } from '../wiring.js';

/**
 * API Gateway's `$default` route: every request no route matched. Like every request it is
 * authenticated first (401 without a valid key, so nothing is learned about the API without one),
 * then answered 405 with `Allow` when the path exists under another method, else 404.
 */
export const makeHandler = (deps: HttpDeps) =>
  httpHandler(deps, { handler: FALLBACK_HANDLER }, async ({ event }) => {
    const { method, path } = event.requestContext.http;
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      throw new ApiError(
        405,
        'method_not_allowed',
        `Method ${method} is not allowed on ${path}; use ${allowed.join(' or ')}.`,
        undefined,
        { allow: allowed.join(', ') },
      );
    }
    throw new ApiError(404, 'not_found', `No route for ${method} ${path}.`);
  });

export const handler = lazyHttpHandler(() => makeHandler(apiDeps('route-not-found')));
