import { suppressionRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listSuppressionsQuerySchema, toSuppressionBody } from '../suppressions/model.js';
import { listSuppressionsRoute } from '../suppressions/routes.js';
import type { SuppressionDeps } from '../suppressions/suppressions.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/suppressions: `{object: "list", has_more, data}`, newest first; `origin` filters. */
export const makeHandler = (deps: HttpDeps & Pick<SuppressionDeps, 'suppressions'>) =>
  httpHandler(deps, listSuppressionsRoute, async ({ query }) => {
    const page = await deps.suppressions.list(parseInput(listSuppressionsQuerySchema, query));
    return {
      statusCode: 200,
      body: {
        object: 'list',
        has_more: page.has_more,
        data: page.data.map((entry) => {
          const { object: _, ...listed } = toSuppressionBody(entry);
          return listed;
        }),
      },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-suppressions', { suppressions: suppressionRepository })),
);
