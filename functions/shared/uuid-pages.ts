import * as z from 'zod/mini';
import { isUuid } from './ids.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, pageQuerySchema, queryInteger } from './list.js';

/**
 * The paging fields of a list whose ids are UUIDv7s (the audience: topics, contact properties,
 * contacts, segments), as `pageShape` is for the prefixed ids: `limit`, `offset`, and a cursor
 * (`after`, `before`) that must be a UUID from a listed item.
 */
export const uuidPageShape = () => {
  const cursor = (field: string) =>
    z.optional(z.string().check(z.refine(isUuid, `${field} must be an id (a UUID) from a listed item`)));
  return {
    limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
    offset: z.optional(queryInteger('offset', 0, MAX_OFFSET)),
    after: cursor('after'),
    before: cursor('before'),
  };
};

/** A list's query string when its only fields are the page's. */
export const uuidPageQuerySchema = pageQuerySchema(uuidPageShape());
