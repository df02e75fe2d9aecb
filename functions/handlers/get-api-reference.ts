import { buildDocument } from '../api-reference/document.js';
import { renderReference } from '../api-reference/reference-page.js';
import { lazyPublicHandler, type PublicDeps, publicHandler } from '../http/public.js';
import { ROUTE_DOCS } from '../route-docs.js';
import { ROUTES } from '../routes.js';
import { publicDeps } from '../wiring.js';

/**
 * GET /docs: the API reference, the OpenAPI document as a page made on the server (no script, no
 * CDN: it works offline). Public (no key), like the document.
 */
export const makeHandler = (deps: PublicDeps) =>
  publicHandler(deps, async () => renderReference(await buildDocument(ROUTES, ROUTE_DOCS)));

export const handler = lazyPublicHandler(() => makeHandler(publicDeps('get-api-reference')));
