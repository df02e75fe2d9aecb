import { type BroadcastDeps, cancelBroadcast } from '../broadcasts/broadcasts.js';
import { cancelBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { broadcastDeps } from '../wiring/broadcasts.js';

/** POST /v1/broadcasts/{id}/cancel: a scheduled one back to a draft, a queued or sending one canceled. */
export const makeHandler = (deps: HttpDeps & BroadcastDeps) =>
  httpHandler(deps, cancelBroadcastRoute, async ({ params }) => {
    const broadcast = await cancelBroadcast(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'broadcast', id: broadcast.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(broadcastDeps('cancel-broadcast')));
