import { toEmailBody } from '../emails/email-body.js';
import type { EmailRepository } from '../emails/ports.js';
import { getEmailRoute } from '../emails/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { notFound } from '../shared/errors.js';
import { isEmailId } from '../shared/ids.js';
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
    const email = isEmailId(id) ? await deps.emails.get(id) : null;
    if (!email) throw notFound(`Email ${JSON.stringify(id)} not found.`);
    const { attachments: _, body_key, ...shown } = email;
    if (body_key) {
      const bytes = await deps.content?.get(body_key);
      const bodies = bytes ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as typeof shown) : null;
      shown.html = bodies?.html ?? null;
      shown.text = bodies?.text ?? null;
      // Past the content bucket's retention: the email is still shown, saying its bodies are gone.
      if (!bytes) return { statusCode: 200, body: { ...toEmailBody(shown), bodies_expired: true } };
    }
    return { statusCode: 200, body: toEmailBody(shown) };
  });

export const handler = lazyHttpHandler(() => makeHandler(emailReaderDeps()));
