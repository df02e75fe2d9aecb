import { type BroadcastEditDeps, updateBroadcast } from '../broadcasts/broadcasts.js';
import { updateBroadcastSchema } from '../broadcasts/model.js';
import { updateBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { updateBroadcastDeps } from '../wiring/broadcasts.js';

/** PATCH /v1/broadcasts/{id}: a draft's content (what is left out stays); `{object: "broadcast", id}`. */
export const makeHandler = (deps: HttpDeps & BroadcastEditDeps) =>
  httpHandler(deps, updateBroadcastRoute, async ({ params, body }) => {
    const broadcast = await updateBroadcast(deps, params.id ?? '', parseInput(updateBroadcastSchema, body));
    return { statusCode: 200, body: { object: 'broadcast', id: broadcast.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(updateBroadcastDeps()));
