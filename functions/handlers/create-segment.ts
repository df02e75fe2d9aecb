import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { createSegmentSchema } from '../segments/model.js';
import type { SegmentDeps } from '../segments/ports.js';
import { createSegmentRoute } from '../segments/routes.js';
import { createSegment } from '../segments/segments.js';
import { segmentDeps } from '../wiring/segments.js';

/** POST /v1/segments: `{object: "segment", id, name}` (201). */
export const makeHandler = (deps: HttpDeps & SegmentDeps) =>
  httpHandler(deps, createSegmentRoute, async ({ body }) => {
    const { name } = parseInput(createSegmentSchema, body);
    const segment = await createSegment(deps, name);
    return { statusCode: 201, body: { object: 'segment', id: segment.id, name: segment.name } };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentDeps('create-segment')));
