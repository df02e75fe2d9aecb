import { listRecipients, type RecipientDeps, recipientsQuerySchema } from '../broadcasts/recipients.js';
import { listBroadcastRecipientsRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { broadcastRecipientsDeps } from '../wiring/broadcast-recipients.js';

/** GET /v1/broadcasts/{id}/recipients?type=: a page of its recipients of that type; 404 when there is no broadcast. */
export const makeHandler = (deps: HttpDeps & RecipientDeps) =>
  httpHandler(deps, listBroadcastRecipientsRoute, async ({ params, query }) => ({
    statusCode: 200,
    body: await listRecipients(deps, params.id ?? '', parseInput(recipientsQuerySchema, query)),
  }));

export const handler = lazyHttpHandler(() => makeHandler(broadcastRecipientsDeps()));
