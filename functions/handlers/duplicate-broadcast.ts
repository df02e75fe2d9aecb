import { type BroadcastDeps, duplicateBroadcast } from '../broadcasts/broadcasts.js';
import { duplicateBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { broadcastDeps } from '../wiring/broadcasts.js';

/** POST /v1/broadcasts/{id}/duplicate: a new draft with the same content; `{object: "broadcast", id}` of the copy. */
export const makeHandler = (deps: HttpDeps & BroadcastDeps) =>
  httpHandler(deps, duplicateBroadcastRoute, async ({ params }) => {
    const copy = await duplicateBroadcast(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'broadcast', id: copy.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(broadcastDeps('duplicate-broadcast')));
