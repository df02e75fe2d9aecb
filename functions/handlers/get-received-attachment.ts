import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { getReceivedAttachment, type ReceivedContentDeps } from '../receiving/reads.js';
import { getReceivedAttachmentRoute } from '../receiving/routes.js';
import { receivedContentDeps } from '../wiring/receiving-api.js';

/** GET /v1/emails/receiving/{id}/attachments/{attachment_id}: one attachment, with a download link. */
export const makeHandler = (deps: HttpDeps & ReceivedContentDeps) =>
  httpHandler(deps, getReceivedAttachmentRoute, async ({ params }) => ({
    statusCode: 200,
    body: await getReceivedAttachment(deps, params.id ?? '', params.attachment_id ?? ''),
  }));

export const handler = lazyHttpHandler(() => makeHandler(receivedContentDeps('get-received-attachment')));
