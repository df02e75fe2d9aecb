import type { Permission } from './api-keys/model.js';
import { ROUTE_PERMISSIONS, type RouteHandler } from './permissions.js';

/**
 * The HTTP route table: the one place routes are declared. The CDK stack makes one API Gateway
 * route and one Lambda function per entry; the local gateway routes requests with it; the
 * fallback handler uses it to tell 404 (no such path) from 405 (path exists, other method).
 * `handler` names the module in functions/handlers/.
 */
export interface RouteDefinition {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly handler: string;
  readonly summary: string;
  /**
   * The least permission a key needs (declared in permissions.ts, by handler): `sending_access` keys may call only the routes marked
   * `sending_access`; `full_access` keys may call every route. The handlers enforce it (see
   * http/middleware.ts), and the API guide's permission table (docs/api.md) is checked against it.
   *
   * `public`: a page that needs no key (the OpenAPI document, its reference page, the web console's
   * page and files). A public
   * route serves only what is built into the service: its function reads no table, no queue and no
   * request input (http/public.ts), so nothing it answers depends on who asks.
   */
  readonly permission: Permission | 'public';
}

/** A route that needs an API key (every route but the public pages). */
export type ApiRoute = RouteDefinition & { readonly permission: Permission };

const DECLARED: readonly (Omit<RouteDefinition, 'permission' | 'handler'> & { handler: RouteHandler })[] = [
  {
    method: 'POST',
    path: '/v1/emails',
    handler: 'send-email',
    summary: 'Send an email',
  },
  {
    method: 'POST',
    path: '/v1/emails/batch',
    handler: 'send-batch',
    summary: 'Send up to 100 emails at once',
  },
  {
    method: 'GET',
    path: '/v1/emails',
    handler: 'list-emails',
    summary: 'List sent emails, newest first',
  },
  {
    // Before `/v1/emails/{id}`: the local gateway takes the first route that matches (API Gateway
    // prefers the literal path anyway).
    method: 'GET',
    path: '/v1/emails/metrics',
    handler: 'get-email-metrics',
    summary: 'Email metrics: sent, delivered, bounced, opened… and their rates, by period and domain',
  },
  {
    method: 'GET',
    path: '/v1/emails/{id}',
    handler: 'get-email',
    summary: 'Retrieve one email',
  },
  {
    method: 'PATCH',
    path: '/v1/emails/{id}',
    handler: 'update-email',
    summary: 'Reschedule a scheduled email',
  },
  {
    method: 'POST',
    path: '/v1/emails/{id}/cancel',
    handler: 'cancel-email',
    summary: 'Cancel a scheduled email',
  },
  {
    method: 'GET',
    path: '/v1/emails/{id}/attachments',
    handler: 'list-attachments',
    summary: "List an email's attachments, with download links",
  },
  {
    method: 'GET',
    path: '/v1/emails/{id}/attachments/{attachment_id}',
    handler: 'get-attachment',
    summary: 'Retrieve one attachment, with a download link',
  },
  {
    method: 'POST',
    path: '/v1/domains',
    handler: 'create-domain',
    summary: 'Add a sending domain',
  },
  {
    method: 'GET',
    path: '/v1/domains',
    handler: 'list-domains',
    summary: 'List sending domains, newest first',
  },
  {
    method: 'GET',
    path: '/v1/domains/{id}',
    handler: 'get-domain',
    summary: 'Retrieve one domain, with its status read fresh',
  },
  {
    method: 'POST',
    path: '/v1/domains/{id}/verify',
    handler: 'verify-domain',
    summary: 'Check DNS verification now',
  },
  {
    method: 'PATCH',
    path: '/v1/domains/{id}',
    handler: 'update-domain',
    summary: "Change a domain's tracking, TLS and tracking subdomain",
  },
  {
    method: 'DELETE',
    path: '/v1/domains/{id}',
    handler: 'delete-domain',
    summary: 'Remove a sending domain',
  },
  {
    method: 'POST',
    path: '/v1/templates',
    handler: 'create-template',
    summary: 'Create a template (a draft)',
  },
  {
    method: 'GET',
    path: '/v1/templates',
    handler: 'list-templates',
    summary: 'List templates, newest first',
  },
  {
    method: 'GET',
    path: '/v1/templates/{id}',
    handler: 'get-template',
    summary: 'Retrieve a template by id or alias',
  },
  {
    method: 'PATCH',
    path: '/v1/templates/{id}',
    handler: 'update-template',
    summary: 'Change a template (a new current version)',
  },
  {
    method: 'DELETE',
    path: '/v1/templates/{id}',
    handler: 'delete-template',
    summary: 'Remove a template',
  },
  {
    method: 'POST',
    path: '/v1/templates/{id}/publish',
    handler: 'publish-template',
    summary: 'Publish the current version (what sends use)',
  },
  {
    method: 'POST',
    path: '/v1/templates/{id}/duplicate',
    handler: 'duplicate-template',
    summary: 'Copy a template into a new draft',
  },
  {
    method: 'POST',
    path: '/v1/api-keys',
    handler: 'create-api-key',
    summary: 'Create an API key (its token is shown once)',
  },
  {
    method: 'GET',
    path: '/v1/api-keys',
    handler: 'list-api-keys',
    summary: 'List API keys (never their tokens)',
  },
  {
    method: 'PATCH',
    path: '/v1/api-keys/{id}',
    handler: 'update-api-key',
    summary: 'Rename an API key',
  },
  {
    method: 'DELETE',
    path: '/v1/api-keys/{id}',
    handler: 'delete-api-key',
    summary: 'Revoke an API key',
  },
  {
    method: 'POST',
    path: '/v1/suppressions',
    handler: 'add-suppression',
    summary: 'Put an address on the suppression list',
  },
  {
    method: 'GET',
    path: '/v1/suppressions',
    handler: 'list-suppressions',
    summary: 'List suppressed addresses, newest first',
  },
  {
    method: 'GET',
    path: '/v1/suppressions/{id}',
    handler: 'get-suppression',
    summary: 'Retrieve one suppressed address (by id or address)',
  },
  {
    method: 'DELETE',
    path: '/v1/suppressions/{id}',
    handler: 'delete-suppression',
    summary: "Take an address off the suppression list (and off SES's)",
  },
  {
    method: 'POST',
    path: '/v1/suppressions/batch/add',
    handler: 'batch-add-suppressions',
    summary: 'Put up to 100 addresses on the suppression list',
  },
  {
    method: 'POST',
    path: '/v1/suppressions/batch/remove',
    handler: 'batch-remove-suppressions',
    summary: 'Take up to 100 addresses off the suppression list',
  },
  {
    method: 'POST',
    path: '/v1/webhooks',
    handler: 'create-webhook',
    summary: 'Add a webhook endpoint (its signing secret is in the answer)',
  },
  {
    method: 'GET',
    path: '/v1/webhooks',
    handler: 'list-webhooks',
    summary: 'List webhook endpoints, newest first',
  },
  {
    method: 'GET',
    path: '/v1/webhooks/{id}',
    handler: 'get-webhook',
    summary: 'Retrieve one webhook endpoint, with its signing secret',
  },
  {
    method: 'PATCH',
    path: '/v1/webhooks/{id}',
    handler: 'update-webhook',
    summary: "Change an endpoint's URL, events or status",
  },
  {
    method: 'DELETE',
    path: '/v1/webhooks/{id}',
    handler: 'delete-webhook',
    summary: 'Remove a webhook endpoint',
  },
  {
    method: 'POST',
    path: '/v1/webhooks/{id}/signing-secret/rotate',
    handler: 'rotate-webhook-secret',
    summary: 'New signing secret (the old one signs beside it for 24 hours)',
  },
  {
    method: 'GET',
    path: '/v1/webhooks/{id}/events',
    handler: 'list-webhook-events',
    summary: "List an endpoint's messages, newest first",
  },
  {
    method: 'GET',
    path: '/v1/webhooks/{id}/events/{event_id}',
    handler: 'get-webhook-event',
    summary: 'Retrieve one message, with its payload',
  },
  {
    method: 'GET',
    path: '/v1/webhooks/{id}/events/{event_id}/attempts',
    handler: 'list-webhook-attempts',
    summary: "List a message's delivery attempts",
  },
  {
    method: 'POST',
    path: '/v1/webhooks/{id}/events/{event_id}/replay',
    handler: 'replay-webhook-event',
    summary: 'Send a message again (same id)',
  },
  {
    method: 'GET',
    path: '/v1/logs',
    handler: 'list-logs',
    summary: 'List API request logs, newest first (a filter by status class)',
  },
  {
    method: 'GET',
    path: '/v1/logs/{id}',
    handler: 'get-log',
    summary: 'Retrieve one request log, with its redacted request and response bodies',
  },
  {
    method: 'GET',
    path: '/v1/openapi.json',
    handler: 'get-openapi',
    summary: 'This API described: an OpenAPI 3.1 document (no key needed)',
  },
  {
    method: 'GET',
    path: '/docs',
    handler: 'get-api-reference',
    summary: 'The API reference, a page made from the OpenAPI document (no key needed)',
  },
  {
    method: 'GET',
    path: '/',
    handler: 'get-console',
    summary:
      'The web console: a page that signs in with an API key and shows emails, domains, keys… (no key needed to load it)',
  },
  {
    method: 'GET',
    path: '/assets/{file}',
    handler: 'get-console-asset',
    summary: 'A file of the web console, by its content-hashed name (no key needed)',
  },
];

/** Every route, with its permission (from permissions.ts: one entry per handler, type-checked). */
export const ROUTES: readonly RouteDefinition[] = DECLARED.map((route) => ({
  ...route,
  permission: ROUTE_PERMISSIONS[route.handler],
}));

/** The routes that need an API key. */
export const API_ROUTES: readonly ApiRoute[] = ROUTES.filter(
  (route): route is ApiRoute => route.permission !== 'public',
);

/** The public pages: no key, only what is built into the service. */
export const PUBLIC_ROUTES = ROUTES.filter((route) => route.permission === 'public');

/** The route a handler module serves. */
export const routeOf = (handler: string): RouteDefinition | undefined =>
  ROUTES.find((r) => r.handler === handler);

/** Answers every request no route matches (API Gateway's `$default` route). */
export const FALLBACK_HANDLER = 'route-not-found';

/** A percent-decoded path segment; one that is not valid percent-encoding is kept as sent (no id looks like it). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Path template → matcher; `{name}` matches one non-empty path segment. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith('{') && w.endsWith('}')) {
      if (!g) return undefined;
      params[w.slice(1, -1)] = decodeSegment(g);
    } else if (w !== g) return undefined;
  }
  return params;
}

export function findRoute(method: string, path: string) {
  for (const route of ROUTES) {
    const params = route.method === method.toUpperCase() ? matchPath(route.path, path) : undefined;
    if (params) return { route, params };
  }
  return undefined;
}

/** The methods a path answers to (empty: no such path). */
export const allowedMethods = (path: string): string[] =>
  ROUTES.filter((route) => matchPath(route.path, path)).map((route) => route.method);
