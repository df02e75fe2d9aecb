import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { SegmentDeps } from '../segments/ports.js';
import { removeContactSegmentRoute } from '../segments/routes.js';
import { removeFromSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/**
 * DELETE /v1/contacts/{id or email}/segments/{segment_id}: takes the contact out of the segment;
 * 404 when the contact is missing or not in it.
 */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, removeContactSegmentRoute, async ({ params }) => {
    const segmentId = params.segment_id ?? '';
    const contact = await removeFromSegment(deps, params.id ?? '', segmentId);
    return {
      statusCode: 200,
      body: { object: 'contact_segment', contact_id: contact.id, segment_id: segmentId, deleted: true },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('remove-contact-segment')));
