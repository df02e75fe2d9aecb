import { type BroadcastSendDeps, createBroadcast } from '../broadcasts/broadcasts.js';
import { createBroadcastSchema } from '../broadcasts/model.js';
import { createBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { createBroadcastDeps } from '../wiring/broadcasts.js';

/** POST /v1/broadcasts: a draft, or with `send: true` sent now or at `scheduled_at`; 201 with `{object: "broadcast", id}`. */
export const makeHandler = (deps: HttpDeps & BroadcastSendDeps) =>
  httpHandler(deps, createBroadcastRoute, async ({ body }) => {
    const broadcast = await createBroadcast(deps, parseInput(createBroadcastSchema, body));
    return { statusCode: 201, body: { object: 'broadcast', id: broadcast.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(createBroadcastDeps()));
