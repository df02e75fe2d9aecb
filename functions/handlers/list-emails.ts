import { DynamoApiKeyRepository } from '../adapters/dynamodb/api-key-repository.js';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../adapters/dynamodb/email-repository.js';
import { loadConfig } from '../config.js';
import { listEmailsQuerySchema } from '../core/list.js';
import type { EmailRepository } from '../core/ports.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';

/** GET /v1/emails?limit&offset&status: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & { emails: EmailRepository }) =>
  httpHandler(deps, {}, async ({ query }) => {
    const page = await deps.emails.list(parseInput(listEmailsQuerySchema, query));
    return {
      statusCode: 200,
      body: {
        object: 'list',
        has_more: page.has_more,
        data: page.data.map((email) => ({ object: 'email', ...email })),
      },
    };
  });

export const handler = lazyHttpHandler(() => {
  const { TABLE_NAME } = loadConfig('TABLE_NAME');
  const db = createDocumentClient();
  return makeHandler({
    apiKeys: new DynamoApiKeyRepository(db, TABLE_NAME),
    emails: new DynamoEmailRepository(db, TABLE_NAME),
  });
});
