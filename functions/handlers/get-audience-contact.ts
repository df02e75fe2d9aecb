import { type ContactDeps, findAudienceContact } from '../contacts/contacts.js';
import { pathContact, toContactBody } from '../contacts/model.js';
import { getAudienceContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** GET /v1/audiences/{id}/contacts/{id or address}: one of the audience's contacts. */
export const makeHandler = (deps: HttpDeps & Pick<ContactDeps, 'reads'>) =>
  httpHandler(deps, getAudienceContactRoute, async ({ params }) => {
    const [contact, defined] = await Promise.all([
      findAudienceContact(deps, params.id ?? '', pathContact(params.contact_id ?? '')),
      deps.reads.properties(),
    ]);
    return { statusCode: 200, body: toContactBody(contact, defined) };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactApiDeps('get-audience-contact', {})));
