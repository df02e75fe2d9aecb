import { consoleIndex } from '../console/pages.js';
import { lazyPublicHandler, type PublicDeps, publicHandler } from '../http/public.js';
import { publicDeps } from '../wiring.js';

/**
 * GET /: the web console's page, which loads its hashed script and style sheet (get-console-asset).
 * Public (no key): it is the same built page for everyone; the console then calls the API with the
 * key its user signs in with.
 */
export const makeHandler = (deps: PublicDeps) => publicHandler(deps, consoleIndex);

export const handler = lazyPublicHandler(() => makeHandler(publicDeps('get-console')));
