import { toPropertyListed } from '../contact-properties/model.js';
import { type ContactPropertyDeps, listProperties } from '../contact-properties/properties.js';
import { listContactPropertiesRoute } from '../contact-properties/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { uuidPageQuerySchema } from '../shared/uuid-pages.js';
import { contactPropertyDeps } from '../wiring/topics.js';

/** GET /v1/contact-properties: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & Pick<ContactPropertyDeps, 'properties'>) =>
  httpHandler(deps, listContactPropertiesRoute, async ({ query }) => {
    const page = await listProperties(deps, parseInput(uuidPageQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toPropertyListed) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(contactPropertyDeps('list-contact-properties')));
