import { createPropertySchema } from '../contact-properties/model.js';
import { type ContactPropertyDeps, createProperty } from '../contact-properties/properties.js';
import { createContactPropertyRoute } from '../contact-properties/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactPropertyDeps } from '../wiring/topics.js';

/** POST /v1/contact-properties: a new key (409 when taken); 201 with `{object: "contact_property", id}`. */
export const makeHandler = (deps: HttpDeps & ContactPropertyDeps) =>
  httpHandler(deps, createContactPropertyRoute, async ({ body }) => {
    const property = await createProperty(deps, parseInput(createPropertySchema, body));
    return { statusCode: 201, body: { object: 'contact_property', id: property.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactPropertyDeps('create-contact-property')));
