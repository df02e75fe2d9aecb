import { DOMAIN_ID, KEY_ID, LIST, page, ref, removed, T0, T2 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import type { API_KEY_ROUTES } from './routes.js';

/** The API keys' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

export const API_KEY_DOCS: DocsOf<typeof API_KEY_ROUTES> = {
  'create-api-key': {
    ok: 'Created: the token is in this answer only.',
    example: { object: 'api_key', id: KEY_ID, token: 'esk_3q9V0mJx7wYp2K5dN8rT1cLg4hB6fZsA0eUiOqWyXvM' },
    requestExample: { name: 'Production sending', permission: 'sending_access', domain_id: DOMAIN_ID },
    description:
      '`permission` defaults to `full_access`; a `sending_access` key may be held to one domain (`domain_id`, which must exist: 400 otherwise).',
  },
  'list-api-keys': {
    ok: 'A page of keys (never their tokens).',
    example: page([
      {
        object: 'api_key',
        id: KEY_ID,
        name: 'Production sending',
        permission: 'sending_access',
        domain_id: DOMAIN_ID,
        created_at: T0,
        last_used_at: T2,
      },
    ]),
    description: LIST,
  },
  'update-api-key': {
    ok: 'Renamed.',
    example: ref('api_key', KEY_ID),
    requestExample: { name: 'Billing emails' },
  },
  'delete-api-key': {
    ok: 'Revoked: its next request gets 401.',
    example: removed('api_key', KEY_ID),
  },
};
