import { contactWrites } from '../adapters/dynamodb/contact-writes.js';
import { type ContactWriteDeps, createContact } from '../contacts/contacts.js';
import { createContactSchema } from '../contacts/model.js';
import { createContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** POST /v1/contacts: 201 `{object: "contact", id}`; 200 with the contact an address has already. */
export const makeHandler = (deps: HttpDeps & ContactWriteDeps) =>
  httpHandler(deps, createContactRoute, async ({ body }) => {
    const { contact, created } = await createContact(deps, parseInput(createContactSchema, body));
    return { statusCode: created ? 201 : 200, body: { object: 'contact', id: contact.id } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('create-contact', { contacts: contactWrites })),
);
