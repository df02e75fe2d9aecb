import * as z from 'zod/mini';

/** `PATCH /v1/emails/{id}`: the new time of a scheduled email (read against the request's time by the use case). */
export const updateEmailSchema = z.strictObject(
  {
    scheduled_at: z.string({
      error: 'scheduled_at is required: an ISO 8601 time or, for example, "in 1 hour"',
    }),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object') },
);
