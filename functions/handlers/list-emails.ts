import { createRepositories } from '../adapters/dynamodb/repositories.js';
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

export const handler = lazyHttpHandler(() =>
  makeHandler(createRepositories(loadConfig('TABLE_NAME').TABLE_NAME)),
);
