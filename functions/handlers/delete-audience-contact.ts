import { contactWrites } from '../adapters/dynamodb/contact-writes.js';
import { type ContactDeps, deleteContact } from '../contacts/contacts.js';
import { pathContact } from '../contacts/model.js';
import { deleteAudienceContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** DELETE /v1/audiences/{id}/contacts/{id or address}: one of the audience's contacts deleted. */
export const makeHandler = (deps: HttpDeps & Omit<ContactDeps, 'listing'>) =>
  httpHandler(deps, deleteAudienceContactRoute, async ({ params }) => {
    const contact = await deleteContact(deps, pathContact(params.contact_id ?? ''), params.id ?? '');
    return {
      statusCode: 200,
      body: { object: 'contact', id: contact.id, contact: contact.id, deleted: true },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('delete-audience-contact', { contacts: contactWrites })),
);
