import { lazyPublicHandler, type PublicDeps, publicHandler } from '../http/public.js';
import { buildDocument } from '../openapi/document.js';
import { publicDeps } from '../wiring.js';

/**
 * GET /v1/openapi.json: the API described, OpenAPI 3.1, built from the route table and the very
 * schemas the handlers validate with. Public (no key): it holds nothing secret, as Resend's does not.
 */
export const makeHandler = (deps: PublicDeps) =>
  publicHandler(deps, () => ({
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify(buildDocument()),
  }));

export const handler = lazyPublicHandler(() => makeHandler(publicDeps('get-openapi')));
