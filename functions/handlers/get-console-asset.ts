import { consoleAsset } from '../console/pages.js';
import { lazyPublicHandler, type PublicDeps, publicFileHandler } from '../http/public.js';
import { publicDeps } from '../wiring.js';

/**
 * GET /assets/{file}: a file of the web console by its content-hashed name (cached for a year); any
 * other name is a 404. Public (no key): only the files built into the service.
 */
export const makeHandler = (deps: PublicDeps) => publicFileHandler(deps, consoleAsset);

export const handler = lazyPublicHandler(() => makeHandler(publicDeps('get-console-asset')));
