import { EMAIL_ID, LIST, page, SUPPRESSION_ID, T0, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_SUPPRESSION_BATCH } from './model.js';
import type { SUPPRESSION_ROUTES } from './routes.js';

/** The suppression list's routes in the OpenAPI document: their words and examples (routes.ts declares them). */

export const SUPPRESSION_DOCS: DocsOf<typeof SUPPRESSION_ROUTES> = {
  'add-suppression': {
    ok: 'Added (201), or already listed (200, the entry it has).',
    example: {
      object: 'suppression',
      id: SUPPRESSION_ID,
      email: 'someone@example.com',
      origin: 'manual',
      source_id: null,
      created_at: T0,
    },
    requestExample: { email: 'someone@example.com' },
  },
  'list-suppressions': {
    ok: 'A page of suppressed addresses.',
    example: page([
      {
        id: SUPPRESSION_ID,
        email: 'gone@example.com',
        origin: 'bounce',
        source_id: EMAIL_ID,
        created_at: T1,
      },
    ]),
    description: `${LIST} \`origin\` filters.`,
  },
  'get-suppression': {
    ok: 'The entry.',
    example: {
      object: 'suppression',
      id: SUPPRESSION_ID,
      email: 'gone@example.com',
      origin: 'bounce',
      source_id: EMAIL_ID,
      created_at: T1,
    },
    description: 'By id (`sup_…`) or by address.',
  },
  'delete-suppression': {
    ok: "Taken off the list (and off SES's account-level list): it is mailed again.",
    example: { object: 'suppression', id: SUPPRESSION_ID, email: 'gone@example.com', deleted: true },
    description:
      'By id (`sup_…`) or by address; 404 when it is not on the list. Ours beside Resend: `email`.',
  },
  'batch-add-suppressions': {
    ok: 'One entry per address given, in order; `added: false` where it was listed already (it keeps its entry).',
    example: {
      data: [
        {
          object: 'suppression',
          id: SUPPRESSION_ID,
          email: 'ana@example.com',
          origin: 'manual',
          added: true,
        },
        {
          object: 'suppression',
          id: 'sup_01m7yy8c0de1v5k3jq9w2t6mra',
          email: 'gone@example.com',
          origin: 'bounce',
          added: false,
        },
      ],
    },
    requestExample: { emails: ['ana@example.com', 'gone@example.com'] },
    description: `1 to ${MAX_SUPPRESSION_BATCH} addresses. Ours beside Resend: \`email\`, \`origin\`, \`added\`.`,
  },
  'batch-remove-suppressions': {
    ok: 'One entry per one given, in order; `deleted: false` (and a null id) where none was listed.',
    example: {
      data: [
        { object: 'suppression', id: SUPPRESSION_ID, email: 'ana@example.com', deleted: true },
        { object: 'suppression', id: null, email: 'never@example.com', deleted: false },
      ],
    },
    requestExample: { emails: ['ana@example.com', 'never@example.com'] },
    description: `\`emails\` or \`ids\` (not both), 1 to ${MAX_SUPPRESSION_BATCH}. Ours beside Resend: \`email\` (null when given by an id that is not listed).`,
  },
};
