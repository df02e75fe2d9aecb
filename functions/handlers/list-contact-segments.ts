import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { toContactSegmentItem } from '../segments/answers.js';
import { uuidPageQuerySchema } from '../segments/model.js';
import type { SegmentDeps } from '../segments/ports.js';
import { listContactSegmentsRoute } from '../segments/routes.js';
import { contactSegments } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/**
 * GET /v1/contacts/{id or email}/segments: the contact's segments, newest first, each with when the
 * contact was added to it; 404 when there is no such contact.
 */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, listContactSegmentsRoute, async ({ params, query }) => {
    const page = await contactSegments(deps, params.id ?? '', parseInput(uuidPageQuerySchema, query));
    return {
      statusCode: 200,
      body: {
        object: 'list',
        has_more: page.has_more,
        data: page.data.map(({ segment, membership }) => toContactSegmentItem(segment, membership)),
      },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('list-contact-segments')));
