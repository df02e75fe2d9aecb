import { createRepositories } from '../adapters/dynamodb/repositories.js';
import { loadConfig } from '../config.js';
import { listDomainsQuerySchema, toDomainBody } from '../core/domains.js';
import type { DomainRepository } from '../core/ports.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';

/** GET /v1/domains?limit&offset: `{object: "list", has_more, data}`, newest first, with stored statuses. */
export const makeHandler = (deps: HttpDeps & { domains: DomainRepository }) =>
  httpHandler(deps, {}, async ({ query }) => {
    const page = await deps.domains.list(parseInput(listDomainsQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toDomainBody) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(createRepositories(loadConfig('TABLE_NAME').TABLE_NAME)),
);
