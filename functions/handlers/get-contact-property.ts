import { toPropertyBody } from '../contact-properties/model.js';
import { type ContactPropertyDeps, getProperty } from '../contact-properties/properties.js';
import { getContactPropertyRoute } from '../contact-properties/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { contactPropertyDeps } from '../wiring/topics.js';

/** GET /v1/contact-properties/{id}: the property; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & Pick<ContactPropertyDeps, 'properties'>) =>
  httpHandler(deps, getContactPropertyRoute, async ({ params }) => ({
    statusCode: 200,
    body: toPropertyBody(await getProperty(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() => makeHandler(contactPropertyDeps('get-contact-property')));
