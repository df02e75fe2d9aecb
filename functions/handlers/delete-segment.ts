import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { SegmentDeleteDeps } from '../segments/ports.js';
import { deleteSegmentRoute } from '../segments/routes.js';
import { deleteSegment } from '../segments/segments.js';
import { segmentDeleteDeps } from '../wiring/segments.js';

/**
 * DELETE /v1/segments/{id}: the segment at once; its memberships off the request path (the audience
 * clean-up). No contact is deleted. 404 when there is none.
 */
export const makeHandler = (deps: HttpDeps & SegmentDeleteDeps) =>
  httpHandler(deps, deleteSegmentRoute, async ({ params }) => {
    const segment = await deleteSegment(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'segment', id: segment.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeleteDeps('delete-segment')));
