import * as z from 'zod/mini';
import { isId } from './ids.js';

export const DEFAULT_LIMIT = 20;

export const MAX_LIMIT = 100;

/**
 * Offset pagination has to read the skipped entries, so it is bounded; the index entries it reads
 * are about 100 bytes each, so the deepest page costs about 1 MB of index reads. Cursors (`after`,
 * `before`) have no such cost: a page from a cursor reads only that page.
 */
export const MAX_OFFSET = 10_000;

// Query string values arrive as strings: accept only plain decimal integers ("1e2", "2.0", " 3" are refused).
export const queryInteger = (field: string, min: number, max: number) =>
  z
    .pipe(
      z.string().check(z.refine((s) => /^-?\d+$/.test(s), `${field} must be an integer`)),
      z.pipe(
        z.transform((s: string) => Number(s)),
        z.number().check(z.refine((n) => n >= min && n <= max, `${field} must be between ${min} and ${max}`)),
      ),
      // What the OpenAPI document says it is (metadata only: the query string's text is what is read).
    )
    .register(z.globalRegistry, { type: 'integer', minimum: min, maximum: max });

/**
 * Where a page starts: `offset` entries from the newest (the spec's way), or next to an item, as
 * Resend's SDK asks: `after` (the page of older items after that one) or `before` (the page of
 * newer items before it). The cursor item itself is never in the page, and need not exist any
 * more: ids sort by creation time, so it is a position.
 */
export type PageQuery = { limit: number; offset: number; after?: string; before?: string };

/** The paging fields of a list's query string, for ids with this prefix (`em`, `dom`, `key`). */
export const pageShape = (idPrefix: string) => {
  const cursor = (field: string) =>
    z.optional(
      z
        .string()
        .check(
          z.refine((s) => isId(idPrefix, s), `${field} must be an id (${idPrefix}_…) from a listed item`),
        ),
    );
  return {
    limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
    offset: z.optional(queryInteger('offset', 0, MAX_OFFSET)),
    after: cursor('after'),
    before: cursor('before'),
  };
};

/** The issue of a query giving both cursors: a page starts from one of them. */
export const bothCursors = (before: string) => ({
  code: 'custom' as const,
  path: ['before'],
  message: 'give after or before, not both',
  input: before,
});

/** A list's query: the page fields, each checked, then their combination (one way to start a page). */
export const pageQuerySchema = <Shape extends ReturnType<typeof pageShape>>(shape: Shape) =>
  z.pipe(
    z.strictObject(shape).check(
      z.superRefine((query, ctx) => {
        const q = query as { after?: string; before?: string; offset?: number };
        if (q.after !== undefined && q.before !== undefined) ctx.issues.push(bothCursors(q.before));
        else if ((q.after ?? q.before) !== undefined && q.offset !== undefined)
          ctx.issues.push({
            code: 'custom',
            path: ['offset'],
            message: 'give offset or a cursor (after, before), not both',
            input: q.offset,
          });
      }),
    ),
    z.transform((query) => ({ ...query, offset: (query as { offset?: number }).offset ?? 0 })),
  );
