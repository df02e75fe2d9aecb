import { ApiError } from '../core/errors.js';
import { errorResponse, type HttpEvent, type HttpResponse } from '../http/middleware.js';
import { allowedMethods } from '../routes.js';

/**
 * API Gateway's `$default` route: everything no route matched. 405 with `Allow` when the path
 * exists under another method, else 404, both in the one error shape. It reads no key and no table.
 */
export const handler = async (event: HttpEvent): Promise<HttpResponse> => {
  const { method, path } = event.requestContext.http;
  const allowed = allowedMethods(path);
  if (allowed.length > 0) {
    return errorResponse(
      new ApiError(
        405,
        'method_not_allowed',
        `Method ${method} is not allowed on ${path}; use ${allowed.join(' or ')}.`,
      ),
      { allow: allowed.join(', ') },
    );
  }
  return errorResponse(new ApiError(404, 'not_found', `No route for ${method} ${path}.`));
};
