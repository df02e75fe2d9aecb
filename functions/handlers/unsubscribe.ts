import type { HttpEvent } from '../http/event.js';
import { lazyHttpHandler } from '../http/middleware.js';
import { type TokenPageDeps, tokenPageHandler } from '../http/token.js';
import { preferencesPage, UNSUBSCRIBE_PAGE_CSP, unsubscribeErrorPage } from '../unsubscribe/page.js';
import {
  applyChange,
  formChange,
  oneClickChange,
  openToken,
  type UnsubscribeDeps,
} from '../unsubscribe/preferences.js';
import { unsubscribeRoute } from '../unsubscribe/routes.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { unsubscribeDeps } from '../wiring/unsubscribe.js';

/** The most of a body read: the page's form is a few hundred bytes per topic. */
const MAX_FORM_BYTES = 64 * 1024;

/** The POST's fields: form-urlencoded or multipart (RFC 8058 allows either); anything else has none. */
async function formOf(event: HttpEvent): Promise<URLSearchParams | FormData> {
  if (!event.body) return new URLSearchParams();
  const body = Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (body.length > MAX_FORM_BYTES) return new URLSearchParams();
  const type = event.headers?.['content-type'] ?? '';
  if (/^application\/x-www-form-urlencoded/i.test(type)) return new URLSearchParams(body.toString('utf8'));
  if (/^multipart\/form-data/i.test(type))
    return new Response(body, { headers: { 'content-type': type } })
      .formData()
      .catch(() => new URLSearchParams());
  return new URLSearchParams();
}

/**
 * POST /unsubscribe/{token}: RFC 8058's one-click unsubscribe, or the preference page's form. A
 * POST that is not the page's form (`form=preferences`) is a one-click: out of the link's topic, or
 * out of every email for a link without one, at once; it answers 200 with the page. A token that
 * opens nothing answers the 404 page and changes nothing.
 */
export const makeHandler = (deps: TokenPageDeps & UnsubscribeDeps) =>
  tokenPageHandler(
    deps,
    unsubscribeRoute,
    { contentSecurityPolicy: UNSUBSCRIBE_PAGE_CSP, failed: () => unsubscribeErrorPage(500) },
    async (token, event) => {
      const claim = await openToken(deps, token);
      if (!claim) return { statusCode: 404, body: unsubscribeErrorPage(404) };
      const form = await formOf(event);
      const fromPage = form.get('form') === 'preferences';
      const prefs = await applyChange(
        readOncePerInvocation(deps),
        claim,
        fromPage ? formChange(form) : oneClickChange(claim),
      );
      return { statusCode: 200, body: preferencesPage(prefs, fromPage ? 'saved' : 'unsubscribed') };
    },
  );

export const handler = lazyHttpHandler(() => makeHandler(unsubscribeDeps()));
