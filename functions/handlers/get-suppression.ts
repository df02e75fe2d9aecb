import { suppressionRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toSuppressionBody } from '../suppressions/model.js';
import { getSuppressionRoute } from '../suppressions/routes.js';
import { getSuppression, type SuppressionDeps } from '../suppressions/suppressions.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/suppressions/{id or email}: the entry; 404 when the address is not on the list. */
export const makeHandler = (deps: HttpDeps & Pick<SuppressionDeps, 'suppressions'>) =>
  httpHandler(deps, getSuppressionRoute, async ({ params }) => ({
    statusCode: 200,
    body: toSuppressionBody(await getSuppression(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('get-suppression', { suppressions: suppressionRepository })),
);
