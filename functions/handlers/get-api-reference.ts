import { lazyPublicHandler, type PublicDeps, publicHandler } from '../http/public.js';
import { buildDocument } from '../openapi/document.js';
import { renderReference } from '../openapi/reference-page.js';
import { publicDeps } from '../wiring.js';

/**
 * GET /docs: the API reference, the OpenAPI document as a page made on the server (no script, no
 * CDN: it works offline). Public (no key), like the document.
 */
export const makeHandler = (deps: PublicDeps) => publicHandler(deps, () => renderReference(buildDocument()));

export const handler = lazyPublicHandler(() => makeHandler(publicDeps('get-api-reference')));
