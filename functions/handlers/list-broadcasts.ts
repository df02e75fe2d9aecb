import { type BroadcastDeps, listBroadcasts } from '../broadcasts/broadcasts.js';
import { toBroadcastListed } from '../broadcasts/model.js';
import { listBroadcastsRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { uuidPageQuerySchema } from '../shared/uuid-pages.js';
import { broadcastDeps } from '../wiring/broadcasts.js';

/** GET /v1/broadcasts: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & Pick<BroadcastDeps, 'broadcasts'>) =>
  httpHandler(deps, listBroadcastsRoute, async ({ query }) => {
    const page = await listBroadcasts(deps, parseInput(uuidPageQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toBroadcastListed) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(broadcastDeps('list-broadcasts')));
