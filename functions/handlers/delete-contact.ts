import { contactWrites } from '../adapters/dynamodb/contact-writes.js';
import { type ContactDeps, deleteContact } from '../contacts/contacts.js';
import { pathContact } from '../contacts/model.js';
import { deleteContactRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** DELETE /v1/contacts/{id or address}: deleted now, its memberships and choices off the request path. */
export const makeHandler = (deps: HttpDeps & Omit<ContactDeps, 'listing'>) =>
  httpHandler(deps, deleteContactRoute, async ({ params }) => {
    const contact = await deleteContact(deps, pathContact(params.id ?? ''));
    return {
      statusCode: 200,
      body: { object: 'contact', id: contact.id, contact: contact.id, deleted: true },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('delete-contact', { contacts: contactWrites })),
);
