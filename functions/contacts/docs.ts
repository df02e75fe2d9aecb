import { page, T0, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_CREATE_SEGMENTS, MAX_CREATE_TOPICS } from './model.js';
import type { CONTACT_ROUTES } from './routes.js';

/** The contacts' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const CONTACT_ID = '0198f1c2-7a3e-7b41-9c2d-5e8f0a1b2c3d';
const SEGMENT_ID = '0198f1b0-2d4c-7e15-8a9b-3c4d5e6f7a8b';
const TOPIC_ID = '0198f1b4-9e2a-7c03-b1d2-6f7a8b9c0d1e';

const contact = {
  object: 'contact',
  id: CONTACT_ID,
  email: 'steve.wozniak@gmail.com',
  first_name: 'Steve',
  last_name: 'Wozniak',
  created_at: T0,
  unsubscribed: false,
  properties: { company: 'Apple' },
};

const listed = {
  id: CONTACT_ID,
  email: 'steve.wozniak@gmail.com',
  first_name: 'Steve',
  last_name: 'Wozniak',
  created_at: T0,
  unsubscribed: false,
};

const PAGES =
  'Newest first, in cursor pages: `limit` (1 to 100, default 20), then `after` or `before` a contact id from a page.';

const BY_ID_OR_ADDRESS =
  'By id, or by address (compared case-insensitively; put in the path as is, `+` included, as the SDK does).';

const createRequest = {
  email: 'steve.wozniak@gmail.com',
  first_name: 'Steve',
  last_name: 'Wozniak',
  properties: { company: 'Apple' },
  segments: [SEGMENT_ID],
  topics: [{ id: TOPIC_ID, subscription: 'opt_in' }],
};

const CREATE = `One contact per address, compared case-insensitively: an address that has one already answers 200 with that contact's id and keeps its fields (as Resend answers it; PATCH changes a contact), but joins the segments given and takes the topic choices given. \`segments\`: ids (Resend's document) or \`[{id}]\` (SDK 6.38), at most ${MAX_CREATE_SEGMENTS}; \`topics\`: \`[{id, subscription}]\`, at most ${MAX_CREATE_TOPICS}; \`properties\`: values of the contact properties, by key. An unknown segment, topic or property is a 400 naming it. Raises \`contact.created\`.`;

export const CONTACT_DOCS: DocsOf<typeof CONTACT_ROUTES> = {
  'create-contact': {
    ok: 'Created (201), or the contact the address has already (200).',
    example: { object: 'contact', id: CONTACT_ID },
    requestExample: createRequest,
    description: `${CREATE} Resend's deprecated \`audience_id\` joins that segment.`,
  },
  'list-contacts': {
    ok: 'A page of contacts.',
    example: page([listed]),
    description: `${PAGES} \`segment_id\`: that segment's members only (404 when there is no such segment).`,
  },
  'get-contact': {
    ok: 'The contact, with its property values by key.',
    example: contact,
    description: BY_ID_OR_ADDRESS,
  },
  'update-contact': {
    ok: 'Changed.',
    example: { object: 'contact', id: CONTACT_ID },
    requestExample: { first_name: 'Stephen', unsubscribed: true, properties: { company: null } },
    description: `${BY_ID_OR_ADDRESS} What is given changes; \`null\` clears a name or a property's value. \`email\` moves the contact to another address (409 when another contact has it). Raises \`contact.updated\`.`,
  },
  'delete-contact': {
    ok: 'Deleted; its segment memberships and topic choices are removed shortly after, off the request path. No other contact changes.',
    example: { object: 'contact', id: CONTACT_ID, contact: CONTACT_ID, deleted: true },
    description: `${BY_ID_OR_ADDRESS} Raises \`contact.deleted\`. Ours beside Resend's document: \`contact\` (SDK 6.38's field), the same id.`,
  },
  'create-audience-contact': {
    ok: 'Created in the audience (201), or the contact the address has already (200, unchanged).',
    example: { object: 'contact', id: CONTACT_ID },
    requestExample: { email: 'steve.wozniak@gmail.com', first_name: 'Steve' },
    description: `What SDK 6.38's \`contacts.create({audienceId})\` calls. An audience is a segment: the contact joins it. 404 when there is no such audience. ${CREATE}`,
  },
  'list-audience-contacts': {
    ok: "A page of the audience's contacts.",
    example: page([listed]),
    description: `An audience is a segment: the same as \`GET /v1/contacts?segment_id=\`. ${PAGES}`,
  },
  'get-audience-contact': {
    ok: 'The contact, with its property values by key.',
    example: { ...contact, created_at: T1 },
    description: `What SDK 6.38's \`contacts.get({audienceId})\` calls: 404 unless the contact is in the audience. ${BY_ID_OR_ADDRESS}`,
  },
  'update-audience-contact': {
    ok: 'Changed.',
    example: { object: 'contact', id: CONTACT_ID },
    requestExample: { unsubscribed: true },
    description: `What SDK 6.38's \`contacts.update({audienceId})\` calls: 404 unless the contact is in the audience; then as \`PATCH /v1/contacts/{id}\`.`,
  },
  'delete-audience-contact': {
    ok: 'The contact deleted (not only taken out of the audience).',
    example: { object: 'contact', id: CONTACT_ID, contact: CONTACT_ID, deleted: true },
    description: `What SDK 6.38's \`contacts.remove({audienceId})\` calls: 404 unless the contact is in the audience; then as \`DELETE /v1/contacts/{id}\` (to take a contact out of a segment only: \`DELETE /v1/contacts/{id}/segments/{segment_id}\`).`,
  },
};
