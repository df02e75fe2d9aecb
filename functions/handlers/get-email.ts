import { notFound } from '../core/errors.js';
import { isEmailId } from '../core/ids.js';
import type { EmailRepository } from '../core/ports.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/emails/{id}: the email with its bodies and delivery events; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & { emails: EmailRepository }) =>
  httpHandler(deps, { route: 'get-email' }, async ({ params }) => {
    const id = params.id ?? '';
    const email = isEmailId(id) ? await deps.emails.get(id) : null;
    if (!email) throw notFound(`Email ${JSON.stringify(id)} not found.`);
    return { statusCode: 200, body: { object: 'email', ...email } };
  });

export const handler = lazyHttpHandler(() => makeHandler(apiDeps('get-email')));
