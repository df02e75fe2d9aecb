import { suppressionRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { addSuppressionSchema, toSuppressionBody } from '../suppressions/model.js';
import { addSuppressionRoute } from '../suppressions/routes.js';
import { addSuppressions, type SuppressionDeps } from '../suppressions/suppressions.js';
import { apiDeps } from '../wiring.js';

/**
 * POST /v1/suppressions `{email}`: puts the address on the list by hand (`origin: "manual"`);
 * 201 with the new entry, or 200 with the entry it already has.
 */
export const makeHandler = (deps: HttpDeps & Pick<SuppressionDeps, 'suppressions' | 'clock'>) =>
  httpHandler(deps, addSuppressionRoute, async ({ body }) => {
    const { email } = parseInput(addSuppressionSchema, body);
    const [result] = await addSuppressions(deps, [email]);
    if (!result) throw new Error('no result for the address');
    return { statusCode: result.added ? 201 : 200, body: toSuppressionBody(result.entry) };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('add-suppression', { suppressions: suppressionRepository })),
);
