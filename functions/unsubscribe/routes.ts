import { PUBLISHES } from '../shared/function-spec.js';
import type { RouteDeclaration } from '../shared/route.js';

/**
 * The unsubscribe routes (issue 40; shared/route.ts says what a declaration holds): `token` routes,
 * no key, the signed token in the path is the credential (unsubscribe/token.ts). Both read the keys
 * through the secrets extension (UNSUBSCRIBE_KEYS_SECRET), the contact by its address (GetItem), the
 * topics and the contact's choices (Query). The POST writes choices (conditional PutItem), the
 * global unsubscribe (UpdateItem), a new contact (PutItems; DeleteItem to take back a lost race), raises contact.* events and
 * counts `unsubscribed` in the email metrics (the email's summary and body: BatchGetItem; its
 * counter: UpdateItem) and, for a broadcast's email, in the broadcast's tally (PutItem, UpdateItem).
 */

export const unsubscribePageRoute = {
  handler: 'unsubscribe-page',
  method: 'GET',
  path: '/unsubscribe/{token}',
  permission: 'token',
  summary:
    "An unsubscribe link's preference page: the contact's topics and a global unsubscribe; opening it changes nothing",
  page: { type: 'text/html', notFound: true },
  errors: [404],
  access: {
    env: ['UNSUBSCRIBE_KEYS_SECRET'],
    actions: ['GetItem', 'Query'],
    unsubscribeKeys: 'read',
  },
} as const satisfies RouteDeclaration;

export const unsubscribeRoute = {
  handler: 'unsubscribe',
  method: 'POST',
  path: '/unsubscribe/{token}',
  permission: 'token',
  summary:
    "One-click unsubscribe (RFC 8058: List-Unsubscribe=One-Click) out of the link's topic, or the preference page's form: applied at once, 200",
  page: { type: 'text/html', notFound: true },
  errors: [404],
  access: {
    env: ['UNSUBSCRIBE_KEYS_SECRET', 'WEBHOOK_QUEUE_URL'],
    actions: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    unsubscribeKeys: 'read',
    ...PUBLISHES,
  },
} as const satisfies RouteDeclaration;

export const UNSUBSCRIBE_ROUTES = [
  unsubscribePageRoute,
  unsubscribeRoute,
] as const satisfies readonly RouteDeclaration[];
