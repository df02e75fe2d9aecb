import { domainRepository } from '../adapters/dynamodb/repositories.js';
import { type ApiKeyDeps, createApiKey } from '../api-keys/api-keys.js';
import { createApiKeySchema } from '../api-keys/requests.js';
import { createApiKeyRoute } from '../api-keys/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** POST /v1/api-keys `{name, permission?, domain_id?}`: 201 `{id, token}`; the token is shown this once. */
export const makeHandler = (deps: HttpDeps & ApiKeyDeps) =>
  httpHandler(deps, createApiKeyRoute, async ({ body }) => ({
    statusCode: 201,
    body: await createApiKey(deps, parseInput(createApiKeySchema, body)),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('create-api-key', { domains: domainRepository })),
);
