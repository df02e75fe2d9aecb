import { suppressionRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { batchAddSuppressionsSchema } from '../suppressions/model.js';
import { batchAddSuppressionsRoute } from '../suppressions/routes.js';
import { addSuppressions, type SuppressionDeps } from '../suppressions/suppressions.js';
import { apiDeps } from '../wiring.js';

/**
 * POST /v1/suppressions/batch/add `{emails}` (1-100): each on the list by hand; 201 with one entry
 * per address given, in order (an address already listed keeps its entry).
 */
export const makeHandler = (deps: HttpDeps & Pick<SuppressionDeps, 'suppressions' | 'clock'>) =>
  httpHandler(deps, batchAddSuppressionsRoute, async ({ body }) => {
    const { emails } = parseInput(batchAddSuppressionsSchema, body);
    const results = await addSuppressions(deps, emails);
    return {
      statusCode: 201,
      body: {
        data: results.map(({ entry, added }) => ({
          object: 'suppression',
          id: entry.id,
          email: entry.email,
          origin: entry.origin,
          added,
        })),
      },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('batch-add-suppressions', { suppressions: suppressionRepository })),
);
