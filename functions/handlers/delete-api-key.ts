import { revokeApiKey } from '../api-keys/api-keys.js';
import { deleteApiKeyRoute } from '../api-keys/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** DELETE /v1/api-keys/{id}: revokes the key; its next request gets 401. */
export const makeHandler = (deps: HttpDeps) =>
  httpHandler(deps, deleteApiKeyRoute, async ({ params }) => {
    const key = await revokeApiKey(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'api_key', id: key.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(apiDeps('delete-api-key')));
