import { emailRepository } from '../adapters/dynamodb/repositories.js';
import { toEmailBody } from '../emails/email-body.js';
import { listEmailsQuerySchema } from '../emails/list-query.js';
import type { EmailRepository } from '../emails/ports.js';
import { listEmailsRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/emails?limit&offset&after&before, and our filters (emails/list-query.ts): `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & { emails: EmailRepository }) =>
  httpHandler(deps, listEmailsRoute, async ({ query }) => {
    const page = await deps.emails.list(parseInput(listEmailsQuerySchema, query));
    return {
      statusCode: 200,
      body: {
        object: 'list',
        has_more: page.has_more,
        data: page.data.map(toEmailBody),
        ...(page.scanned_to ? { scanned_to: page.scanned_to } : {}),
      },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-emails', { emails: emailRepository })),
);
