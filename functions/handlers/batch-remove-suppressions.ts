import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { batchRemoveSuppressionsSchema } from '../suppressions/model.js';
import { batchRemoveSuppressionsRoute } from '../suppressions/routes.js';
import { removeSuppressions, type SuppressionDeps } from '../suppressions/suppressions.js';
import { suppressionDeps } from '../wiring.js';

/**
 * POST /v1/suppressions/batch/remove `{emails}` or `{ids}` (1-100): each taken off the list (and
 * off SES's); 200 with one entry per one given, in order, `deleted: false` where none was listed.
 */
export const makeHandler = (deps: HttpDeps & SuppressionDeps) =>
  httpHandler(deps, batchRemoveSuppressionsRoute, async ({ body }) => {
    const input = parseInput(batchRemoveSuppressionsSchema, body);
    const results = await removeSuppressions(deps, input.emails ?? input.ids ?? []);
    return {
      statusCode: 200,
      body: {
        data: results.map(({ given, entry, deleted }) => ({
          object: 'suppression',
          id: entry?.id ?? null,
          email: entry?.email ?? (input.emails ? given : null),
          deleted,
        })),
      },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(suppressionDeps('batch-remove-suppressions')));
