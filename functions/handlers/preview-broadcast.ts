import { type BroadcastPreviewDeps, previewBroadcast } from '../broadcasts/broadcasts.js';
import { previewBroadcastSchema } from '../broadcasts/model.js';
import { previewBroadcastRoute } from '../broadcasts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { previewBroadcastDeps } from '../wiring/broadcasts.js';

/** POST /v1/broadcasts/{id}/preview (ours): the broadcast rendered for one contact (by id or address). */
export const makeHandler = (deps: HttpDeps & BroadcastPreviewDeps) =>
  httpHandler(deps, previewBroadcastRoute, async ({ params, body }) => {
    const { contact } = parseInput(previewBroadcastSchema, body);
    return { statusCode: 200, body: await previewBroadcast(deps, params.id ?? '', contact) };
  });

export const handler = lazyHttpHandler(() => makeHandler(previewBroadcastDeps()));
