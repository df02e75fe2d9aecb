import { updatePropertySchema } from '../contact-properties/model.js';
import { type ContactPropertyDeps, updateProperty } from '../contact-properties/properties.js';
import { updateContactPropertyRoute } from '../contact-properties/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactPropertyDeps } from '../wiring/topics.js';

/** PATCH /v1/contact-properties/{id}: `fallback_value` only (of the property's type; null removes it). */
export const makeHandler = (deps: HttpDeps & Pick<ContactPropertyDeps, 'properties'>) =>
  httpHandler(deps, updateContactPropertyRoute, async ({ params, body }) => {
    const property = await updateProperty(deps, params.id ?? '', parseInput(updatePropertySchema, body));
    return { statusCode: 200, body: { object: 'contact_property', id: property.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactPropertyDeps('update-contact-property')));
