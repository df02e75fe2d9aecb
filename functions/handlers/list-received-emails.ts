import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import {
  listReceivedEmails,
  listReceivedEmailsQuerySchema,
  type ReceivedReadDeps,
} from '../receiving/reads.js';
import { listReceivedEmailsRoute } from '../receiving/routes.js';
import { receivedListDeps } from '../wiring/receiving-api.js';

/** GET /v1/emails/receiving: received emails, newest first, in cursor pages (no bodies: the table alone). */
export const makeHandler = (deps: HttpDeps & ReceivedReadDeps) =>
  httpHandler(deps, listReceivedEmailsRoute, async ({ query }) => ({
    statusCode: 200,
    body: await listReceivedEmails(deps, parseInput(listReceivedEmailsQuerySchema, query)),
  }));

export const handler = lazyHttpHandler(() => makeHandler(receivedListDeps()));
