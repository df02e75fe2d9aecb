import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toSegmentBody } from '../segments/answers.js';
import type { SegmentDeps } from '../segments/ports.js';
import { getSegmentRoute } from '../segments/routes.js';
import { getSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/** GET /v1/segments/{id}: the segment; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, getSegmentRoute, async ({ params }) => ({
    statusCode: 200,
    body: toSegmentBody(await getSegment(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('get-segment')));
