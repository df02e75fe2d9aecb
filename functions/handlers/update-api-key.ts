import { renameApiKey } from '../api-keys/api-keys.js';
import { updateApiKeySchema } from '../api-keys/requests.js';
import { updateApiKeyRoute } from '../api-keys/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** PATCH /v1/api-keys/{id} `{name}`: renames the key (nothing else about a key changes). */
export const makeHandler = (deps: HttpDeps) =>
  httpHandler(deps, updateApiKeyRoute, async ({ params, body }) => {
    const { name } = parseInput(updateApiKeySchema, body);
    const key = await renameApiKey(deps, params.id ?? '', name);
    return { statusCode: 200, body: { object: 'api_key', id: key.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(apiDeps('update-api-key')));
