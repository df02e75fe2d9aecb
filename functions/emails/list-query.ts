import * as z from 'zod/mini';
import { type PageQuery, pageQuerySchema, pageShape } from '../shared/list.js';
import { EMAIL_STATUSES, type EmailStatus } from './status.js';

/** An instant in ISO 8601 with a time and a zone (`2026-11-28T09:00:00Z`, `…+01:00`), as epoch milliseconds. */
const instant = (field: string) =>
  z.optional(
    z.pipe(
      z
        .string()
        .check(
          z.refine(
            (s) =>
              /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(s) &&
              !Number.isNaN(Date.parse(s)),
            `${field} must be an ISO 8601 date and time with a zone, such as 2026-11-28T09:00:00Z`,
          ),
        ),
      z.transform((s: string) => Date.parse(s)),
    ),
  );

/**
 * `GET /v1/emails`: a page (Resend's `limit`, `after`, `before`, and `offset`), and the filters of our
 * own: `status`, `recipient` (To, Cc or Bcc; exact, case-insensitive), `sender_domain` (the From
 * address's domain, case-insensitive), `tag` (`name:value`, exact), `created_after` and
 * `created_before` (ISO 8601 instants, both exclusive). Addresses and domains are lower-cased here,
 * as the search index holds them.
 */
export const listEmailsQuerySchema = pageQuerySchema({
  ...pageShape('em'),
  status: z.optional(z.enum(EMAIL_STATUSES, { error: `status must be one of ${EMAIL_STATUSES.join(', ')}` })),
  recipient: z.optional(
    z.pipe(
      z
        .string()
        .check(
          z.refine(
            (s) => /^[^\s@<>]+@[^\s@<>]+$/.test(s.trim()) && s.length <= 320,
            'recipient must be one email address, such as delivered@resend.dev',
          ),
        ),
      z.transform((s: string) => s.trim().toLowerCase()),
    ),
  ),
  sender_domain: z.optional(
    z.pipe(
      z
        .string()
        .check(
          z.refine(
            (s) => /^[a-z0-9.-]+\.[a-z0-9-]+$/i.test(s.trim()) && s.length <= 253,
            'sender_domain must be a domain name, such as acme.test',
          ),
        ),
      z.transform((s: string) => s.trim().toLowerCase()),
    ),
  ),
  tag: z.optional(
    z
      .string()
      .check(
        z.refine(
          (s) => /^[^:]+:.*$/.test(s) && s.length <= 600,
          'tag must be name:value, such as category:welcome',
        ),
      ),
  ),
  created_after: instant('created_after'),
  created_before: instant('created_before'),
});

export interface ListEmailsQuery extends PageQuery {
  status?: EmailStatus;
  recipient?: string;
  sender_domain?: string;
  tag?: string;
  /** Epoch milliseconds: emails created strictly after. */
  created_after?: number;
  /** Epoch milliseconds: emails created strictly before. */
  created_before?: number;
}
