import * as z from 'zod/mini';
import { type PageQuery, pageQuerySchema, pageShape } from '../shared/list.js';
import { EMAIL_STATUSES, type EmailStatus } from './status.js';

/** `GET /v1/emails`: a page, and the status filter (ours). */
export const listEmailsQuerySchema = pageQuerySchema({
  ...pageShape('em'),
  status: z.optional(z.enum(EMAIL_STATUSES, { error: `status must be one of ${EMAIL_STATUSES.join(', ')}` })),
});

export interface ListEmailsQuery extends PageQuery {
  status?: EmailStatus;
}
