import * as z from 'zod/mini';
import { EMAIL_STATUSES, type EmailStatus } from './status.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/**
 * Offset pagination has to read the skipped entries, so it is bounded; the index entries it reads
 * are about 100 bytes each, so the deepest page costs about 1 MB of index reads.
 */
export const MAX_OFFSET = 10_000;

// Query string values arrive as strings: accept only plain decimal integers ("1e2", "2.0", " 3" are refused).
export const queryInteger = (field: string, min: number, max: number) =>
  z.pipe(
    z.string().check(z.refine((s) => /^-?\d+$/.test(s), `${field} must be an integer`)),
    z.pipe(
      z.transform((s: string) => Number(s)),
      z.number().check(z.refine((n) => n >= min && n <= max, `${field} must be between ${min} and ${max}`)),
    ),
  );

export const listEmailsQuerySchema = z.strictObject({
  limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
  offset: z._default(queryInteger('offset', 0, MAX_OFFSET), 0),
  status: z.optional(z.enum(EMAIL_STATUSES, { error: `status must be one of ${EMAIL_STATUSES.join(', ')}` })),
});

export interface ListEmailsQuery {
  limit: number;
  offset: number;
  status?: EmailStatus;
}
