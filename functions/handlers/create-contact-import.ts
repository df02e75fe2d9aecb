import type { CreateImportDeps } from '../contact-imports/import.js';
import { createImport, parseFormOptions } from '../contact-imports/import.js';
import { createFromUploadSchema } from '../contact-imports/model.js';
import { createContactImportRoute } from '../contact-imports/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import type { FormBody } from '../http/multipart.js';
import { validationError } from '../shared/errors.js';
import { createImportDeps } from '../wiring/contact-imports.js';

/**
 * POST /v1/contacts/imports: Resend's multipart form (the SDK's `contacts.imports.create` FormData),
 * or (ours) a JSON body naming an upload; 201 `{object: "contact_import", id}`, the rows imported
 * off the request path.
 */
export const makeHandler = (deps: HttpDeps & CreateImportDeps) =>
  httpHandler(deps, createContactImportRoute, async ({ body }) => {
    const given = body as FormBody;
    let job: Awaited<ReturnType<typeof createImport>>;
    if ('form' in given) {
      const file = given.form.get('file');
      if (file === null || typeof file === 'string') {
        const message = 'file: a CSV file is required (a form field named "file" holding the file).';
        throw validationError(message, [{ field: 'file', message }]);
      }
      const options = parseFormOptions(given.form);
      job = await createImport(deps, { file: new Uint8Array(await file.arrayBuffer()) }, options);
    } else {
      const { upload_id, ...options } = parseInput(createFromUploadSchema, given.json);
      job = await createImport(deps, { upload_id }, options);
    }
    return { statusCode: 201, body: { object: 'contact_import', id: job.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(createImportDeps()));
