import { type DomainDeps, updateDomain } from '../domains/domains.js';
import { updateDomainSchema } from '../domains/model.js';
import { updateDomainRoute } from '../domains/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { domainApiDeps } from '../wiring.js';

/**
 * PATCH /v1/domains/{id}: Resend's body (open_tracking, click_tracking, tls, tracking_subdomain,
 * capabilities), each field optional; answers Resend's `{object: "domain", id}`.
 */
export const makeHandler = (deps: HttpDeps & DomainDeps) =>
  httpHandler(deps, updateDomainRoute, async ({ params, body }) => {
    const domain = await updateDomain(deps, params.id ?? '', parseInput(updateDomainSchema, body));
    return { statusCode: 200, body: { object: 'domain', id: domain.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(domainApiDeps('update-domain')));
