import { lazyHttpHandler } from '../http/middleware.js';
import { type TokenPageDeps, tokenPageHandler } from '../http/token.js';
import { preferencesPage, UNSUBSCRIBE_PAGE_CSP, unsubscribeErrorPage } from '../unsubscribe/page.js';
import { openToken, preferences, type UnsubscribeDeps } from '../unsubscribe/preferences.js';
import { unsubscribePageRoute } from '../unsubscribe/routes.js';
import { unsubscribePageDeps } from '../wiring/unsubscribe.js';

/**
 * GET /unsubscribe/{token}: the preference page of an unsubscribe link (unsubscribe/page.ts), no
 * key needed. It only reads: link scanners fetch it. A token that is malformed, altered, forged or
 * signed by a retired key answers the same 404 page (a malformed one without reading anything).
 */
export const makeHandler = (deps: TokenPageDeps & UnsubscribeDeps) =>
  tokenPageHandler(
    deps,
    unsubscribePageRoute,
    { contentSecurityPolicy: UNSUBSCRIBE_PAGE_CSP, failed: () => unsubscribeErrorPage(500) },
    async (token) => {
      const claim = await openToken(deps, token);
      if (!claim) return { statusCode: 404, body: unsubscribeErrorPage(404) };
      return { statusCode: 200, body: preferencesPage(await preferences(deps, claim)) };
    },
  );

export const handler = lazyHttpHandler(() => makeHandler(unsubscribePageDeps()));
