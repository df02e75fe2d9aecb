import type { KeyPermission } from '../shared/route.js';

/*
 * The permissions a key may have, apart from the model so that the web console can import them: a module with no
 * imports (the console's bundle takes only what it imports, and has no node:crypto or zod).
 */

/**
 * - `full_access`: every endpoint.
 * - `sending_access`: only the endpoints the route table marks as sending (POST /v1/emails), and
 *   with a `domain_id`, only from that domain.
 */
export const PERMISSIONS = ['full_access', 'sending_access'] as const satisfies readonly KeyPermission[];
