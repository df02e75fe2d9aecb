import { type DomainDeps, deleteDomain } from '../domains/domains.js';
import { deleteDomainRoute } from '../domains/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { domainApiDeps } from '../wiring.js';

/** DELETE /v1/domains/{id}: removes the SES identity, then the domain; sending from it stops. */
export const makeHandler = (deps: HttpDeps & DomainDeps) =>
  httpHandler(deps, deleteDomainRoute, async ({ params }) => {
    const domain = await deleteDomain(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'domain', id: domain.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(domainApiDeps('delete-domain')));
