import { contactWrites } from '../adapters/dynamodb/contact-writes.js';
import { type ContactWriteDeps, updateContact } from '../contacts/contacts.js';
import { pathContact } from '../contacts/model.js';
import { updateAudienceContactRoute } from '../contacts/routes.js';
import { updateContactSchema } from '../contacts/update-schema.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** PATCH /v1/audiences/{id}/contacts/{id or address}: one of the audience's contacts changed. */
export const makeHandler = (deps: HttpDeps & ContactWriteDeps) =>
  httpHandler(deps, updateAudienceContactRoute, async ({ body, params }) => {
    const input = parseInput(updateContactSchema, body);
    const contact = await updateContact(deps, pathContact(params.contact_id ?? ''), input, params.id ?? '');
    return { statusCode: 200, body: { object: 'contact', id: contact.id } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('update-audience-contact', { contacts: contactWrites })),
);
