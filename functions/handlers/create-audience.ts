import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { createAudienceSchema } from '../segments/model.js';
import type { SegmentDeps } from '../segments/ports.js';
import { createAudienceRoute } from '../segments/routes.js';
import { createSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/** POST /v1/audiences: a segment, answered as Resend's audience `{object: "audience", id, name}` (201). */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, createAudienceRoute, async ({ body }) => {
    const { name } = parseInput(createAudienceSchema, body);
    const segment = await createSegment(deps, name);
    return { statusCode: 201, body: { object: 'audience', id: segment.id, name: segment.name } };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('create-audience')));
