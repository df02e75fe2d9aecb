import type { EmailRepository } from '../emails/ports.js';
import { readEmail } from '../emails/read-email.js';
import { getSharedEmailRoute } from '../emails/routes.js';
import { hashShareToken, looksLikeShareToken, type ShareStore } from '../emails/share.js';
import { SHARE_PAGE_CSP, sharedEmailPage, shareErrorPage } from '../emails/share-page.js';
import { lazyHttpHandler } from '../http/middleware.js';
import { type TokenPageDeps, tokenPageHandler } from '../http/token.js';
import type { Clock, ContentStore } from '../shared/ports.js';
import { sharedEmailPageDeps } from '../wiring/share.js';

/**
 * GET /share/{token}: the read-only page of a shared email (emails/share-page.ts), no key needed.
 * A token that is malformed, altered, unknown or expired answers the same 404 page (nothing tells
 * them apart, and a malformed one is refused without a read); a link opened more than
 * SHARE_VIEWS_PER_MINUTE times in a minute answers 429 with Retry-After.
 */
export const makeHandler = (
  deps: TokenPageDeps & { shares: ShareStore; emails: EmailRepository; content?: ContentStore; clock: Clock },
) =>
  tokenPageHandler(
    deps,
    getSharedEmailRoute,
    { contentSecurityPolicy: SHARE_PAGE_CSP, failed: () => shareErrorPage(500) },
    async (token) => {
      const missing = { statusCode: 404, body: shareErrorPage(404) };
      if (!looksLikeShareToken(token)) return missing;
      const now = deps.clock.now().getTime();
      const share = await deps.shares.open(hashShareToken(token), now);
      if (share.kind === 'throttled')
        return {
          statusCode: 429,
          body: shareErrorPage(429),
          headers: { 'retry-after': String(share.retry_after_s) },
        };
      if (share.kind !== 'open') return missing;
      const read = await readEmail(deps, share.email_id);
      if (!read) return missing;
      return {
        statusCode: 200,
        body: sharedEmailPage(read.email, new Date(share.expires_ms), { bodiesExpired: read.bodiesExpired }),
      };
    },
  );

export const handler = lazyHttpHandler(() => makeHandler(sharedEmailPageDeps()));
