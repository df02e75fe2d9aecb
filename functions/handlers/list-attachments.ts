import { type AttachmentDeps, listAttachments } from '../emails/attachment-reads.js';
import { listAttachmentsQuerySchema } from '../emails/attachments.js';
import { listAttachmentsRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contentReaderDeps } from '../wiring/attachments.js';

/** GET /v1/emails/{id}/attachments: the email's attachments, each with a presigned download link. */
export const makeHandler = (deps: HttpDeps & AttachmentDeps) =>
  httpHandler(deps, listAttachmentsRoute, async ({ params, query }) => ({
    statusCode: 200,
    body: await listAttachments(deps, params.id ?? '', parseInput(listAttachmentsQuerySchema, query)),
  }));

export const handler = lazyHttpHandler(() => makeHandler(contentReaderDeps('list-attachments')));
