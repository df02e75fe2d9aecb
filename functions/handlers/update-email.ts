import { updateEmailSchema } from '../emails/reschedule-request.js';
import { updateEmailRoute } from '../emails/routes.js';
import { rescheduleEmail, type ScheduleChangeDeps } from '../emails/scheduler.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { scheduleChangeDeps } from '../wiring.js';

/**
 * PATCH /v1/emails/{id} `{scheduled_at}`: moves a scheduled email that still waits → 200
 * `{object: "email", id}`; one already being sent, sent, or canceled → 400 (see emails/scheduler.ts).
 */
export const makeHandler = (deps: HttpDeps & ScheduleChangeDeps) =>
  httpHandler(deps, updateEmailRoute, async ({ params, body }) => {
    const { scheduled_at } = parseInput(updateEmailSchema, body);
    return { statusCode: 200, body: await rescheduleEmail(deps, params.id ?? '', scheduled_at) };
  });

export const handler = lazyHttpHandler(() => makeHandler(scheduleChangeDeps()));
