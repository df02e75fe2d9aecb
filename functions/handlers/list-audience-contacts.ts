import { contactListing } from '../adapters/dynamodb/contact-listing.js';
import { type ContactDeps, listContacts } from '../contacts/contacts.js';
import { listAudienceContactsQuerySchema } from '../contacts/list-query.js';
import { toContactListItem } from '../contacts/model.js';
import { listAudienceContactsRoute } from '../contacts/routes.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { contactApiDeps } from '../wiring/contacts.js';

/** GET /v1/audiences/{id}/contacts: the audience's (segment's) members, newest first. */
export const makeHandler = (deps: HttpDeps & Pick<ContactDeps, 'reads' | 'listing'>) =>
  httpHandler(deps, listAudienceContactsRoute, async ({ query, params }) => {
    const page = parseInput(listAudienceContactsQuerySchema, query);
    const found = await listContacts(deps, page, params.id ?? '');
    return {
      statusCode: 200,
      body: { object: 'list', has_more: found.has_more, data: found.data.map(toContactListItem) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(contactApiDeps('list-audience-contacts', { listing: contactListing })),
);
