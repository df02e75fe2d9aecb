import { toImportAnswer } from '../contact-imports/model.js';
import type { ContactImportStore } from '../contact-imports/ports.js';
import { getContactImportRoute } from '../contact-imports/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { notFound } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import { readImportDeps } from '../wiring/contact-imports.js';

/** GET /v1/contacts/imports/{id}: the import's status and counts. */
export const makeHandler = (deps: HttpDeps & { imports: ContactImportStore }) =>
  httpHandler(deps, getContactImportRoute, async ({ params }) => {
    const id = params.id ?? '';
    const job = isUuid(id) ? await deps.imports.get(id) : undefined;
    if (!job) throw notFound(`Contact import ${id} not found.`);
    return { statusCode: 200, body: toImportAnswer(job) };
  });

export const handler = lazyHttpHandler(() => makeHandler(readImportDeps('get-contact-import')));
