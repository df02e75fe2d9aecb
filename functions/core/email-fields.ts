import * as z from 'zod/mini';
import { parseAddress } from './address.js';

/*
 * The fields of an email that other requests share (a template's sender and subject, a scheduled
 * email's new time), apart from the send request's schema in email.ts and its attachments': a
 * function that checks one of these loads no more.
 */

export const MAX_SUBJECT_CHARS = 998;

// zod/mini: the same validation as classic zod at ~12 KB instead of ~440 KB per bundle.
export const address = z.pipe(
  z.string({ error: 'must be a string with an email address' }),
  z.transform((value: string, ctx) => {
    const parsed = parseAddress(value);
    if ('error' in parsed) {
      ctx.issues.push({ code: 'custom', message: parsed.error, input: value });
      return z.NEVER;
    }
    return parsed;
  }),
);

/** `PATCH /v1/emails/{id}`: the new time of a scheduled email (read against the request's time by the use case). */
export const updateEmailSchema = z.strictObject(
  {
    scheduled_at: z.string({
      error: 'scheduled_at is required: an ISO 8601 time or, for example, "in 1 hour"',
    }),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object') },
);
