import { clickedLinksQuerySchema, listClickedLinks, type RecipientDeps } from '../broadcasts/recipients.js';
import { listBroadcastClickedLinksRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { broadcastClickedLinksDeps } from '../wiring/broadcast-recipients.js';

/** GET /v1/broadcasts/{id}/clicked-links: a page of its clicked links; 404 when there is no broadcast. */
export const makeHandler = (deps: HttpDeps & RecipientDeps) =>
  httpHandler(deps, listBroadcastClickedLinksRoute, async ({ params, query }) => ({
    statusCode: 200,
    body: await listClickedLinks(deps, params.id ?? '', parseInput(clickedLinksQuerySchema, query)),
  }));

export const handler = lazyHttpHandler(() => makeHandler(broadcastClickedLinksDeps()));
