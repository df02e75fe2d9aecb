import { type BroadcastReadDeps, readBroadcast } from '../broadcasts/broadcasts.js';
import { toBroadcastBody } from '../broadcasts/model.js';
import { getBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { getBroadcastDeps } from '../wiring/broadcasts.js';

/** GET /v1/broadcasts/{id}: the broadcast with its progress, what holds it and (when read) its totals; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & BroadcastReadDeps) =>
  httpHandler(deps, getBroadcastRoute, async ({ params }) => {
    const { broadcast, totals } = await readBroadcast(deps, params.id ?? '');
    return { statusCode: 200, body: toBroadcastBody(broadcast, totals) };
  });

export const handler = lazyHttpHandler(() => makeHandler(getBroadcastDeps()));
