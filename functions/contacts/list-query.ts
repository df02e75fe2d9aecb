import * as z from 'zod/mini';
import { isUuid } from '../shared/ids.js';
import { DEFAULT_LIMIT, MAX_LIMIT, queryInteger } from '../shared/list.js';

/** The contact listings' query strings (apart from model.ts, so the functions that write bundle none of it). */

const uuidCursor = (field: string) =>
  z.optional(z.string().check(z.refine(isUuid, `${field} must be an id (a UUID) from a listed item`)));

/**
 * A page of contacts (Resend's cursors only: `limit`, `after`, `before`; no offset, which a merge
 * of 16 partitions would have to read), optionally the members of one segment.
 */
export const listContactsQuerySchema = z
  .strictObject({
    limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
    after: uuidCursor('after'),
    before: uuidCursor('before'),
    segment_id: z.optional(z.string()),
  })
  .check(
    z.superRefine((query, ctx) => {
      if (query.after !== undefined && query.before !== undefined)
        ctx.issues.push({
          code: 'custom',
          path: ['before'],
          message: 'give after or before, not both',
          input: query.before,
        });
    }),
  );

/** A segment's members listed by the audience route: the same query without `segment_id`. */
export const listAudienceContactsQuerySchema = z.strictObject({
  limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
  after: uuidCursor('after'),
  before: uuidCursor('before'),
});
