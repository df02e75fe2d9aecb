import { listImportsQuerySchema, toImportAnswer } from '../contact-imports/model.js';
import type { ContactImportStore } from '../contact-imports/ports.js';
import { listContactImportsRoute } from '../contact-imports/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { readImportDeps } from '../wiring/contact-imports.js';

/** GET /v1/contacts/imports?status&limit&after&before: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & { imports: ContactImportStore }) =>
  httpHandler(deps, listContactImportsRoute, async ({ query }) => {
    const { status, ...page } = parseInput(listImportsQuerySchema, query);
    const found = await deps.imports.list({ ...page, offset: 0, ...(status ? { status } : {}) });
    return {
      statusCode: 200,
      body: { object: 'list', has_more: found.has_more, data: found.data.map(toImportAnswer) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(readImportDeps('list-contact-imports')));
