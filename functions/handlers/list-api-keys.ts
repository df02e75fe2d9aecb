import { toApiKeyBody } from '../api-keys/model.js';
import { listApiKeysQuerySchema } from '../api-keys/requests.js';
import { listApiKeysRoute } from '../api-keys/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/api-keys: `{object: "list", has_more, data}`, newest first; never a token or a hash. */
export const makeHandler = (deps: HttpDeps) =>
  httpHandler(deps, listApiKeysRoute, async ({ query }) => {
    const page = await deps.apiKeys.list(parseInput(listApiKeysQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toApiKeyBody) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(apiDeps('list-api-keys')));
