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
}

export const ROUTES: readonly RouteDefinition[] = [
  { method: 'POST', path: '/v1/emails', handler: 'send-email', summary: 'Send an email' },
  { method: 'GET', path: '/v1/emails', handler: 'list-emails', summary: 'List sent emails, newest first' },
  { method: 'GET', path: '/v1/emails/{id}', handler: 'get-email', summary: 'Retrieve one email' },
  { method: 'POST', path: '/v1/domains', handler: 'create-domain', summary: 'Add a sending domain' },
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
    method: 'DELETE',
    path: '/v1/domains/{id}',
    handler: 'delete-domain',
    summary: 'Remove a sending domain',
  },
];

/** Answers every request no route matches (API Gateway's `$default` route). */
export const FALLBACK_HANDLER = 'route-not-found';

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
      params[w.slice(1, -1)] = decodeURIComponent(g);
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
