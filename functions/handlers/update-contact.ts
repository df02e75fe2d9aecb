import { contactWrites } from '../adapters/dynamodb/contact-writes.js';
import { type ContactWriteDeps, updateContact } from '../contacts/contacts.js';
import { pathContact } from '../contacts/model.js';
import { updateContactRoute } from '../contacts/routes.js';
import { updateContactSchema } from '../contacts/update-schema.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** PATCH /v1/contacts/{id or address}: `{object: "contact", id}`. */
export const makeHandler = (deps: HttpDeps & ContactWriteDeps) =>
  httpHandler(deps, updateContactRoute, async ({ body, params }) => {
    const input = parseInput(updateContactSchema, body);
    const contact = await updateContact(deps, pathContact(params.id ?? ''), input);
    return { statusCode: 200, body: { object: 'contact', id: contact.id } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('update-contact', { contacts: contactWrites })),
);
