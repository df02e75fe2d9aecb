import { type DomainDeps, getDomain } from '../domains/domains.js';
import { toDomainBody } from '../domains/model.js';
import { getDomainRoute, type verifyDomainRoute } from '../domains/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { domainApiDeps } from '../wiring.js';

/** GET /v1/domains/{id}: the domain with its status and records' statuses read fresh from SES. */
export const makeHandler = (
  deps: HttpDeps & DomainDeps,
  route: typeof getDomainRoute | typeof verifyDomainRoute = getDomainRoute,
) =>
  httpHandler(deps, route, async ({ params }) => ({
    statusCode: 200,
    body: toDomainBody(await getDomain(deps, params.id ?? ''), deps.region ?? 'us-east-1'),
  }));

export const handler = lazyHttpHandler(() => makeHandler(domainApiDeps('get-domain')));
