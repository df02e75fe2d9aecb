import { type ContactDeps, updateContact } from '../contacts/contacts.js';
import { pathContact, updateContactSchema } from '../contacts/model.js';
import { updateContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** PATCH /v1/contacts/{id or address}: `{object: "contact", id}`. */
export const makeHandler = (deps: HttpDeps & ContactDeps) =>
  httpHandler(deps, updateContactRoute, async ({ body, params }) => {
    const input = parseInput(updateContactSchema, body);
    const contact = await updateContact(deps, pathContact(params.id ?? ''), input);
    return { statusCode: 200, body: { object: 'contact', id: contact.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactApiDeps('update-contact')));
