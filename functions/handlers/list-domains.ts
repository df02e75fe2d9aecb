import { listDomainsQuerySchema, toDomainBody } from '../domains/model.js';
import type { DomainRepository } from '../domains/ports.js';
import { listDomainsRoute } from '../domains/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listDomainsDeps } from '../wiring.js';

/** GET /v1/domains?limit&offset: `{object: "list", has_more, data}`, newest first, with stored statuses. */
export const makeHandler = (deps: HttpDeps & { domains: DomainRepository; region?: string }) =>
  httpHandler(deps, listDomainsRoute, async ({ query }) => {
    const page = await deps.domains.list(parseInput(listDomainsQuerySchema, query));
    return {
      statusCode: 200,
      body: {
        object: 'list',
        has_more: page.has_more,
        data: page.data.map((d) => toDomainBody(d, deps.region ?? 'us-east-1')),
      },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(listDomainsDeps()));
