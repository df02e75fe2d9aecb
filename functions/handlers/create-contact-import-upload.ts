import { createUpload } from '../contact-imports/import.js';
import type { ImportFiles } from '../contact-imports/ports.js';
import { createContactImportUploadRoute } from '../contact-imports/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { Clock } from '../shared/ports.js';
import { uploadDeps } from '../wiring/contact-imports.js';

/**
 * POST /v1/contacts/imports/uploads (ours): a presigned S3 PUT for a CSV file over the form's
 * limit, then POST /v1/contacts/imports with `{"upload_id": …}`.
 */
export const makeHandler = (deps: HttpDeps & { files: ImportFiles; clock: Clock; newId: () => string }) =>
  httpHandler(deps, createContactImportUploadRoute, async () => ({
    statusCode: 201,
    body: await createUpload(deps),
  }));

export const handler = lazyHttpHandler(() => makeHandler(uploadDeps()));
