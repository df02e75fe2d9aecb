import { emailRepository } from '../adapters/dynamodb/repositories.js';
import { cancelEmailRoute } from '../emails/routes.js';
import { cancelEmail } from '../emails/scheduler.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/**
 * POST /v1/emails/{id}/cancel (no body): cancels a scheduled email that still waits, for good →
 * 200 `{object: "email", id}`; it ends `failed` with `failure_reason: "canceled"`. One already
 * being sent or sent → 400 (see emails/scheduler.ts). A repeated cancel answers 200 again.
 */
export const makeHandler = (deps: HttpDeps & Parameters<typeof cancelEmail>[0]) =>
  httpHandler(deps, cancelEmailRoute, async ({ params }) => ({
    statusCode: 200,
    body: await cancelEmail(deps, params.id ?? ''),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('cancel-email', { emails: emailRepository })),
);
