import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import {
  listReceivedAttachments,
  listReceivedAttachmentsQuerySchema,
  type ReceivedContentDeps,
} from '../receiving/reads.js';
import { listReceivedAttachmentsRoute } from '../receiving/routes.js';
import { receivedContentDeps } from '../wiring/receiving-api.js';

/** GET /v1/emails/receiving/{id}/attachments: a received email's attachments, each with a download link. */
export const makeHandler = (deps: HttpDeps & ReceivedContentDeps) =>
  httpHandler(deps, listReceivedAttachmentsRoute, async ({ params, query }) => ({
    statusCode: 200,
    body: await listReceivedAttachments(
      deps,
      params.id ?? '',
      parseInput(listReceivedAttachmentsQuerySchema, query),
    ),
  }));

export const handler = lazyHttpHandler(() => makeHandler(receivedContentDeps('list-received-attachments')));
