import { createDomain, type DomainDeps } from '../domains/domains.js';
import { createDomainSchema, toDomainBody } from '../domains/model.js';
import { createDomainRoute } from '../domains/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { validationError } from '../shared/errors.js';
import { domainApiDeps } from '../wiring.js';

/**
 * POST /v1/domains `{domain}` (or Resend's `{name}`, with its settings): 201 with the domain and
 * the DNS records to publish. A domain's SES identity is in the stack's region: another `region`
 * is refused rather than quietly ignored.
 */
export const makeHandler = (deps: HttpDeps & DomainDeps) =>
  httpHandler(deps, createDomainRoute, async ({ body }) => {
    const { domain, region, settings } = parseInput(createDomainSchema, body);
    const here = deps.region ?? 'us-east-1';
    if (region !== undefined && region !== here) {
      const message = `This service sends from ${here}: its domains are in ${here}, not ${region}. Leave region out, or deploy a stack in ${region}.`;
      throw validationError(message, [{ field: 'region', message }]);
    }
    return { statusCode: 201, body: toDomainBody(await createDomain(deps, domain, settings), here) };
  });

export const handler = lazyHttpHandler(() => makeHandler(domainApiDeps('create-domain')));
