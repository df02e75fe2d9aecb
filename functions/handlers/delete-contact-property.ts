import { type ContactPropertyDeps, deleteProperty } from '../contact-properties/properties.js';
import { deleteContactPropertyRoute } from '../contact-properties/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contactPropertyDeps } from '../wiring/topics.js';

/** DELETE /v1/contact-properties/{id}: the property and its key; every contact's value of it vanishes with it. */
export const makeHandler = (deps: HttpDeps & Pick<ContactPropertyDeps, 'properties'>) =>
  httpHandler(deps, deleteContactPropertyRoute, async ({ params }) => {
    const property = await deleteProperty(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'contact_property', id: property.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactPropertyDeps('delete-contact-property')));
