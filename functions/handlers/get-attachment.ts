import { type AttachmentDeps, getAttachment } from '../emails/attachment-reads.js';
import { getAttachmentRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contentReaderDeps } from '../wiring/attachments.js';

/** GET /v1/emails/{id}/attachments/{attachment_id}: one attachment, with a presigned download link. */
export const makeHandler = (deps: HttpDeps & AttachmentDeps) =>
  httpHandler(deps, getAttachmentRoute, async ({ params }) => ({
    statusCode: 200,
    body: await getAttachment(deps, params.id ?? '', params.attachment_id ?? ''),
  }));

export const handler = lazyHttpHandler(() => makeHandler(contentReaderDeps('get-attachment')));
