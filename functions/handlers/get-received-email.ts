import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import {
  getReceivedEmail,
  getReceivedEmailQuerySchema,
  type ReceivedContentDeps,
} from '../receiving/reads.js';
import { getReceivedEmailRoute } from '../receiving/routes.js';
import { receivedContentDeps } from '../wiring/receiving-api.js';

/** GET /v1/emails/receiving/{id}: one received email, its bodies, headers and raw message's download link. */
export const makeHandler = (deps: HttpDeps & ReceivedContentDeps) =>
  httpHandler(deps, getReceivedEmailRoute, async ({ params, query }) => ({
    statusCode: 200,
    body: await getReceivedEmail(
      deps,
      params.id ?? '',
      parseInput(getReceivedEmailQuerySchema, query).html_format,
    ),
  }));

export const handler = lazyHttpHandler(() => makeHandler(receivedContentDeps('get-received-email')));
