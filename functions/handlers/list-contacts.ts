import { contactListing } from '../adapters/dynamodb/contact-listing.js';
import { type ContactDeps, listContacts } from '../contacts/contacts.js';
import { listContactsQuerySchema } from '../contacts/list-query.js';
import { toContactListItem } from '../contacts/model.js';
import { listContactsRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** GET /v1/contacts?limit&after&before&segment_id: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & Pick<ContactDeps, 'reads' | 'listing'>) =>
  httpHandler(deps, listContactsRoute, async ({ query }) => {
    const { segment_id, ...page } = parseInput(listContactsQuerySchema, query);
    const found = await listContacts(deps, page, segment_id);
    return {
      statusCode: 200,
      body: { object: 'list', has_more: found.has_more, data: found.data.map(toContactListItem) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('list-contacts', { listing: contactListing })),
);
