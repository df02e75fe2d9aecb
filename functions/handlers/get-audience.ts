import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toAudienceBody } from '../segments/answers.js';
import type { SegmentDeps } from '../segments/ports.js';
import { getAudienceRoute } from '../segments/routes.js';
import { getSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/** GET /v1/audiences/{id}: the segment, as Resend's audience; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, getAudienceRoute, async ({ params }) => ({
    statusCode: 200,
    body: toAudienceBody(await getSegment(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('get-audience')));
