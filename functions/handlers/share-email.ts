import { emailRepository, shareStore } from '../adapters/dynamodb/repositories.js';
import type { EmailRepository } from '../emails/ports.js';
import { shareEmailRoute } from '../emails/routes.js';
import {
  hashShareToken,
  newShareToken,
  parseExpiresIn,
  type ShareStore,
  shareEmailSchema,
} from '../emails/share.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { notFound } from '../shared/errors.js';
import { isEmailId } from '../shared/ids.js';
import { apiDeps } from '../wiring.js';

/**
 * POST /v1/emails/{id}/share `{expires_in?}` (Resend's shape): 200 `{object: "email", id, url}`, a
 * link to a read-only page of the email (GET /share/{token}) until it expires; 404 when there is
 * no such email. The token is made here and never stored: only its hash is (emails/share.ts).
 */
export const makeHandler = (deps: HttpDeps & { emails: EmailRepository; shares: ShareStore }) =>
  httpHandler(deps, shareEmailRoute, async ({ params, body, event }) => {
    const id = params.id ?? '';
    const input = parseInput(shareEmailSchema, body);
    const lifetimeMs = parseExpiresIn(input.expires_in);
    const email = isEmailId(id) ? await deps.emails.get(id) : null;
    if (!email) throw notFound(`Email ${JSON.stringify(id)} not found.`);
    const token = newShareToken();
    const now = (deps.clock?.now() ?? new Date()).getTime();
    await deps.shares.create({ hash: hashShareToken(token), email_id: id, expires_ms: now + lifetimeMs });
    // The host the caller reached (API Gateway's domain, or the local service's), where the page is served too.
    const host = event.headers?.host ?? event.requestContext.domainName;
    return { statusCode: 200, body: { object: 'email', id, url: `https://${host}/share/${token}` } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('share-email', { emails: emailRepository, shares: shareStore })),
);
