import { buildDocument } from '../api-reference/document.js';
import { lazyPublicHandler, type PublicDeps, publicHandler } from '../http/public.js';
import { ROUTE_DOCS } from '../route-docs.js';
import { ROUTES } from '../routes.js';
import { publicDeps } from '../wiring.js';

/**
 * GET /v1/openapi.json: the API described, OpenAPI 3.1, built from the routes' declarations and the
 * very schemas the handlers validate with. Public (no key): it holds nothing secret, as Resend's does not.
 */
export const makeHandler = (deps: PublicDeps) =>
  publicHandler(deps, async () => ({
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify(await buildDocument(ROUTES, ROUTE_DOCS)),
  }));

export const handler = lazyPublicHandler(() => makeHandler(publicDeps('get-openapi')));
