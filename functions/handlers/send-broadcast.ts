import { type BroadcastSendDeps, sendBroadcast } from '../broadcasts/broadcasts.js';
import { sendBroadcastSchema } from '../broadcasts/model.js';
import { sendBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { sendBroadcastDeps } from '../wiring/broadcast-send.js';

/** POST /v1/broadcasts/{id}/send: a draft sent now or at `scheduled_at`; `{object: "broadcast", id}`. */
export const makeHandler = (deps: HttpDeps & BroadcastSendDeps) =>
  httpHandler(deps, sendBroadcastRoute, async ({ params, body }) => {
    const { scheduled_at } = parseInput(sendBroadcastSchema, body);
    const broadcast = await sendBroadcast(deps, params.id ?? '', scheduled_at);
    return { statusCode: 200, body: { object: 'broadcast', id: broadcast.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(sendBroadcastDeps()));
