import { type BroadcastDeps, deleteBroadcast } from '../broadcasts/broadcasts.js';
import { deleteBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { broadcastDeps } from '../wiring/broadcasts.js';

/** DELETE /v1/broadcasts/{id}: a draft, or a scheduled broadcast (which cancels it). */
export const makeHandler = (deps: HttpDeps & BroadcastDeps) =>
  httpHandler(deps, deleteBroadcastRoute, async ({ params }) => {
    const broadcast = await deleteBroadcast(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'broadcast', id: broadcast.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(broadcastDeps('delete-broadcast')));
