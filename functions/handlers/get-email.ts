import { toEmailBody } from '../emails/email-body.js';
import type { EmailRepository } from '../emails/ports.js';
import { readEmail } from '../emails/read-email.js';
import { getEmailRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { notFound } from '../shared/errors.js';
import type { ContentStore } from '../shared/ports.js';
import { emailReaderDeps } from '../wiring/get-email.js';

/**
 * GET /v1/emails/{id}: the email with its bodies and delivery events; 404 when there is none.
 * Bodies kept in the content store are read from there (once the bucket's retention removed them,
 * the email is shown without them and `bodies_expired: true`); attachments have their own route.
 */
export const makeHandler = (deps: HttpDeps & { emails: EmailRepository; content?: ContentStore }) =>
  httpHandler(deps, getEmailRoute, async ({ params }) => {
    const id = params.id ?? '';
    const read = await readEmail(deps, id);
    if (!read) throw notFound(`Email ${JSON.stringify(id)} not found.`);
    const { attachments: _, body_key, ...shown } = read.email;
    // Past the content bucket's retention: the email is still shown, saying its bodies are gone.
    if (read.bodiesExpired) return { statusCode: 200, body: { ...toEmailBody(shown), bodies_expired: true } };
    return { statusCode: 200, body: toEmailBody(shown) };
  });

export const handler = lazyHttpHandler(() => makeHandler(emailReaderDeps()));
