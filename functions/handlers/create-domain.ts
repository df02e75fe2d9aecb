import { createDomainSchema, toDomainBody } from '../core/domains.js';
import { createDomain, type DomainDeps } from '../core/use-cases/domains.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { domainApiDeps } from '../wiring.js';

/** POST /v1/domains `{domain}` (or Resend's `{name}`): 201 with the domain and the DNS records to publish. */
export const makeHandler = (deps: HttpDeps & DomainDeps) =>
  httpHandler(deps, { route: 'create-domain', jsonBody: true }, async ({ body }) => {
    const { domain } = parseInput(createDomainSchema, body);
    return {
      statusCode: 201,
      body: toDomainBody(await createDomain(deps, domain), deps.region ?? 'us-east-1'),
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(domainApiDeps('create-domain')));
