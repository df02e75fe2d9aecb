import { contactWrites } from '../adapters/dynamodb/contact-writes.js';
import { type ContactWriteDeps, createContact } from '../contacts/contacts.js';
import { createContactSchema } from '../contacts/model.js';
import { createAudienceContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** POST /v1/audiences/{id}/contacts (SDK 6.38 with `audienceId`): a contact that joins the audience's segment. */
export const makeHandler = (deps: HttpDeps & ContactWriteDeps) =>
  httpHandler(deps, createAudienceContactRoute, async ({ body, params }) => {
    const input = parseInput(createContactSchema, body);
    const { contact, created } = await createContact(deps, input, params.id ?? '');
    return { statusCode: created ? 201 : 200, body: { object: 'contact', id: contact.id } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('create-audience-contact', { contacts: contactWrites })),
);
