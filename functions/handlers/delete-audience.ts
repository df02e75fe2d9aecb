import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { SegmentDeleteDeps } from '../segments/ports.js';
import { deleteAudienceRoute } from '../segments/routes.js';
import { deleteSegment } from '../segments/segments.js';
import { segmentDeleteDeps } from '../wiring/segments.js';

/**
 * DELETE /v1/audiences/{id}: the segment (an audience is one) at once; its memberships off the request path (the audience
 * clean-up). No contact is deleted. 404 when there is none.
 */
export const makeHandler = (deps: HttpDeps & SegmentDeleteDeps) =>
  httpHandler(deps, deleteAudienceRoute, async ({ params }) => {
    const segment = await deleteSegment(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'audience', id: segment.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeleteDeps('delete-audience')));
