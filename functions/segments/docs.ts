import { LIST, page, removed, T0, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_SEGMENT_NAME_CHARS } from './model.js';
import type { SEGMENT_ROUTES } from './routes.js';

/** The segments routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const SEGMENT_ID = '019ac7e2-5b1d-7c3e-9f20-4d8a6b1c2e3f';
const CONTACT_ID = '019ac7e2-7a40-7e11-8c5b-2f9d0e3a4b6c';
const CONTACT_PATH = 'The contact by its id or its address (any case; `+` as it is).';
const AUDIENCE = 'Audiences are segments here, under their older name: the same ids, the same items.';

export const SEGMENT_DOCS: DocsOf<typeof SEGMENT_ROUTES> = {
  'create-segment': {
    ok: 'Created.',
    example: { object: 'segment', id: SEGMENT_ID, name: 'Registered users' },
    requestExample: { name: 'Registered users' },
    description: `A name of 1 to ${MAX_SEGMENT_NAME_CHARS} characters. Resend's deprecated \`audience_id\` is taken and ignored; a \`filter\` is refused: a segment holds the contacts added to it (on creation, by an import, or through \`POST /v1/contacts/{id}/segments/{segment_id}\`).`,
  },
  'list-segments': {
    ok: 'A page of segments.',
    example: page([{ id: SEGMENT_ID, name: 'Registered users', created_at: T0 }]),
    description: LIST,
  },
  'get-segment': {
    ok: 'The segment.',
    example: { object: 'segment', id: SEGMENT_ID, name: 'Registered users', created_at: T0 },
  },
  'update-segment': {
    ok: 'The segment, renamed.',
    example: { object: 'segment', id: SEGMENT_ID, name: 'Customers', created_at: T0 },
    requestExample: { name: 'Customers' },
    description: "Ours: Resend's document has no rename.",
  },
  'delete-segment': {
    ok: 'Deleted.',
    example: removed('segment', SEGMENT_ID),
    description:
      'The segment goes at once; its memberships are removed off the request path (a segment may hold a million). No contact is deleted.',
  },
  'list-segment-contacts': {
    ok: "A page of the segment's contacts.",
    example: page([
      {
        id: CONTACT_ID,
        email: 'ana@example.com',
        first_name: 'Ana',
        created_at: T1,
        unsubscribed: false,
      },
    ]),
    description: `What the SDK's \`contacts.list({ segmentId })\` calls. ${LIST} A name not given is left out. Listed without a scan, however large the segment.`,
  },
  'create-audience': {
    ok: 'Created.',
    example: { object: 'audience', id: SEGMENT_ID, name: 'Registered users' },
    requestExample: { name: 'Registered users' },
    description: AUDIENCE,
  },
  'list-audiences': {
    ok: 'A page of audiences (the segments).',
    example: page([{ id: SEGMENT_ID, name: 'Registered users', created_at: T0 }]),
    description: `${AUDIENCE} ${LIST}`,
  },
  'get-audience': {
    ok: 'The audience.',
    example: { object: 'audience', id: SEGMENT_ID, name: 'Registered users', created_at: T0 },
    description: AUDIENCE,
  },
  'delete-audience': {
    ok: 'Deleted.',
    example: removed('audience', SEGMENT_ID),
    description: `${AUDIENCE} As a segment's deletion: no contact is deleted.`,
  },
  'list-contact-segments': {
    ok: "A page of the contact's segments; `created_at`: when the contact was added to it.",
    example: page([{ id: SEGMENT_ID, name: 'Registered users', created_at: T1 }]),
    description: `${CONTACT_PATH} ${LIST}`,
  },
  'add-contact-segment': {
    ok: 'The contact is in the segment (it may have been already).',
    example: { object: 'contact_segment', contact_id: CONTACT_ID, segment_id: SEGMENT_ID },
    description: `${CONTACT_PATH} 404 when the contact or the segment is missing.`,
  },
  'remove-contact-segment': {
    ok: 'The contact is no longer in the segment.',
    example: { object: 'contact_segment', contact_id: CONTACT_ID, segment_id: SEGMENT_ID, deleted: true },
    description: `${CONTACT_PATH} 404 when the contact is missing or not in the segment.`,
  },
};
