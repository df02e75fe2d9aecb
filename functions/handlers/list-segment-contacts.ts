import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { toSegmentContact } from '../segments/answers.js';
import { uuidPageQuerySchema } from '../segments/model.js';
import type { SegmentMemberDeps } from '../segments/ports.js';
import { listSegmentContactsRoute } from '../segments/routes.js';
import { segmentContacts } from '../segments/segments.js';
import { segmentMemberDeps } from '../wiring/segments.js';

/**
 * GET /v1/segments/{id}/contacts (the SDK's `contacts.list({ segmentId })`): a page of its contacts,
 * newest first, without a scan; 404 when the segment is missing.
 */
export const makeHandler = (deps: HttpDeps & SegmentMemberDeps) =>
  httpHandler(deps, listSegmentContactsRoute, async ({ params, query }) => {
    const page = await segmentContacts(deps, params.id ?? '', parseInput(uuidPageQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toSegmentContact) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(segmentMemberDeps()));
