import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { deleteSuppressionRoute } from '../suppressions/routes.js';
import { removeOneSuppression, type SuppressionDeps } from '../suppressions/suppressions.js';
import { suppressionDeps } from '../wiring.js';

/**
 * DELETE /v1/suppressions/{id or email}: takes the address off the list (and off SES's
 * account-level list), so it is mailed again; 404 when it is not on the list.
 */
export const makeHandler = (deps: HttpDeps & SuppressionDeps) =>
  httpHandler(deps, deleteSuppressionRoute, async ({ params }) => {
    const entry = await removeOneSuppression(deps, params.id ?? '');
    return {
      statusCode: 200,
      body: { object: 'suppression', id: entry.id, email: entry.email, deleted: true },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(suppressionDeps('delete-suppression')));
