import type { Permission } from './api-keys/model.js';

/**
 * The route table's permission column (functions/routes.ts): the least permission a key needs for
 * each route, by its handler. `sending_access` keys may call only the routes marked so;
 * `full_access` keys every route; `public` routes need no key. Apart from the table so that the
 * middleware that checks it (http/middleware.ts) loads this and not every route's path and summary.
 */
export const ROUTE_PERMISSIONS = {
  'send-email': 'sending_access',
  'send-batch': 'sending_access',
  'list-emails': 'full_access',
  'get-email-metrics': 'full_access',
  'get-email': 'full_access',
  'update-email': 'full_access',
  'cancel-email': 'full_access',
  'list-attachments': 'full_access',
  'get-attachment': 'full_access',
  'create-domain': 'full_access',
  'list-domains': 'full_access',
  'get-domain': 'full_access',
  'verify-domain': 'full_access',
  'update-domain': 'full_access',
  'delete-domain': 'full_access',
  'create-template': 'full_access',
  'list-templates': 'full_access',
  'get-template': 'full_access',
  'update-template': 'full_access',
  'delete-template': 'full_access',
  'publish-template': 'full_access',
  'duplicate-template': 'full_access',
  'create-api-key': 'full_access',
  'list-api-keys': 'full_access',
  'update-api-key': 'full_access',
  'delete-api-key': 'full_access',
  'add-suppression': 'full_access',
  'list-suppressions': 'full_access',
  'get-suppression': 'full_access',
  'delete-suppression': 'full_access',
  'batch-add-suppressions': 'full_access',
  'batch-remove-suppressions': 'full_access',
  'create-webhook': 'full_access',
  'list-webhooks': 'full_access',
  'get-webhook': 'full_access',
  'update-webhook': 'full_access',
  'delete-webhook': 'full_access',
  'rotate-webhook-secret': 'full_access',
  'list-webhook-events': 'full_access',
  'get-webhook-event': 'full_access',
  'list-webhook-attempts': 'full_access',
  'replay-webhook-event': 'full_access',
  'list-logs': 'full_access',
  'get-log': 'full_access',
  'get-openapi': 'public',
  'get-api-reference': 'public',
  'get-console': 'public',
  'get-console-asset': 'public',
} as const satisfies Record<string, Permission | 'public'>;

/** A handler the route table serves. */
export type RouteHandler = keyof typeof ROUTE_PERMISSIONS;

/** The permission a route's handler needs; undefined for a handler no route serves. */
export const permissionOf = (handler: string): Permission | 'public' | undefined =>
  (ROUTE_PERMISSIONS as Record<string, Permission | 'public'>)[handler];
