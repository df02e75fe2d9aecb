import { type ContactDeps, findContact } from '../contacts/contacts.js';
import { pathContact, toContactBody } from '../contacts/model.js';
import { getContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** GET /v1/contacts/{id or address}: the contact, with its property values by key. */
export const makeHandler = (deps: HttpDeps & Pick<ContactDeps, 'reads'>) =>
  httpHandler(deps, getContactRoute, async ({ params }) => {
    const [contact, defined] = await Promise.all([
      findContact(deps, pathContact(params.id ?? '')),
      deps.reads.properties(),
    ]);
    return { statusCode: 200, body: toContactBody(contact, defined) };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactApiDeps('get-contact', {})));
