import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import type { SegmentDeps } from '../segments/ports.js';
import { addContactSegmentRoute } from '../segments/routes.js';
import { addToSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/**
 * POST /v1/contacts/{id or email}/segments/{segment_id}: adds the contact to the segment (again: no
 * change); 404 when either is missing.
 */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, addContactSegmentRoute, async ({ params }) => {
    const { membership } = await addToSegment(deps, params.id ?? '', params.segment_id ?? '');
    return {
      statusCode: 200,
      body: {
        object: 'contact_segment',
        contact_id: membership.contact_id,
        segment_id: membership.segment_id,
      },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('add-contact-segment')));
