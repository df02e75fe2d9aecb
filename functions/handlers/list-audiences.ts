import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { toSegmentListItem } from '../segments/answers.js';
import { uuidPageQuerySchema } from '../segments/model.js';
import type { SegmentDeps } from '../segments/ports.js';
import { listAudiencesRoute } from '../segments/routes.js';
import { listSegments } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/** GET /v1/audiences: the segments, as Resend lists audiences (`{object: "list", has_more, data}`), newest first. */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, listAudiencesRoute, async ({ query }) => {
    const page = await listSegments(deps, parseInput(uuidPageQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toSegmentListItem) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('list-audiences')));
