import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { toSegmentBody } from '../segments/answers.js';
import { updateSegmentSchema } from '../segments/model.js';
import type { SegmentDeps } from '../segments/ports.js';
import { updateSegmentRoute } from '../segments/routes.js';
import { renameSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/** PATCH /v1/segments/{id}: renames it; answers the segment; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, updateSegmentRoute, async ({ params, body }) => {
    const { name } = parseInput(updateSegmentSchema, body);
    return { statusCode: 200, body: toSegmentBody(await renameSegment(deps, params.id ?? '', name)) };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('update-segment')));
