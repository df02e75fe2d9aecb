import { API_KEY_ROUTES } from './api-keys/routes.js';
import { API_REFERENCE_ROUTES } from './api-reference/routes.js';
import { BROADCAST_ROUTES } from './broadcasts/routes.js';
import { CONSOLE_ROUTES } from './console/routes.js';
import { CONTACT_IMPORT_ROUTES } from './contact-imports/routes.js';
import { CONTACT_PROPERTY_ROUTES } from './contact-properties/routes.js';
import { CONTACT_ROUTES } from './contacts/routes.js';
import { DOMAIN_ROUTES } from './domains/routes.js';
import { EMAIL_ROUTES } from './emails/routes.js';
import { METRICS_ROUTES } from './metrics/routes.js';
import { RECEIVING_ROUTES } from './receiving/routes.js';
import { LOG_ROUTES } from './request-logs/routes.js';
import { SEGMENT_ROUTES } from './segments/routes.js';
import type { KeyPermission, RouteDeclaration } from './shared/route.js';
import { SUPPRESSION_ROUTES } from './suppressions/routes.js';
import { TEMPLATE_ROUTES } from './templates/routes.js';
import { TOPIC_ROUTES } from './topics/routes.js';
import { UNSUBSCRIBE_ROUTES } from './unsubscribe/routes.js';
import { USAGE_ROUTES } from './usage/routes.js';
import { WEBHOOK_ROUTES } from './webhooks/routes.js';

/** Each concept's routes, by the concept's folder. */
export const ROUTES_BY_CONCEPT = {
  emails: EMAIL_ROUTES,
  metrics: METRICS_ROUTES,
  usage: USAGE_ROUTES,
  receiving: RECEIVING_ROUTES,
  domains: DOMAIN_ROUTES,
  templates: TEMPLATE_ROUTES,
  'api-keys': API_KEY_ROUTES,
  suppressions: SUPPRESSION_ROUTES,
  webhooks: WEBHOOK_ROUTES,
  contacts: CONTACT_ROUTES,
  'contact-imports': CONTACT_IMPORT_ROUTES,
  segments: SEGMENT_ROUTES,
  topics: TOPIC_ROUTES,
  'contact-properties': CONTACT_PROPERTY_ROUTES,
  unsubscribe: UNSUBSCRIBE_ROUTES,
  broadcasts: BROADCAST_ROUTES,
  'request-logs': LOG_ROUTES,
  'api-reference': API_REFERENCE_ROUTES,
  console: CONSOLE_ROUTES,
} as const satisfies Record<string, readonly RouteDeclaration[]>;

/**
 * The route table: every concept's routes (each declared once, in its concept's routes.ts), read
 * by the stack (one API Gateway route and one function each), the local gateway, the fallback (404
 * or 405), the catalog of functions and the OpenAPI document.
 */
export const ROUTES = [
  ...EMAIL_ROUTES,
  ...METRICS_ROUTES,
  ...USAGE_ROUTES,
  ...RECEIVING_ROUTES,
  ...DOMAIN_ROUTES,
  ...TEMPLATE_ROUTES,
  ...API_KEY_ROUTES,
  ...SUPPRESSION_ROUTES,
  ...WEBHOOK_ROUTES,
  ...CONTACT_ROUTES,
  ...CONTACT_IMPORT_ROUTES,
  ...SEGMENT_ROUTES,
  ...TOPIC_ROUTES,
  ...CONTACT_PROPERTY_ROUTES,
  ...UNSUBSCRIBE_ROUTES,
  ...BROADCAST_ROUTES,
  ...LOG_ROUTES,
  ...API_REFERENCE_ROUTES,
  ...CONSOLE_ROUTES,
] as const satisfies readonly RouteDeclaration[];

/** A route's handler: its function's name. */
export type RouteHandler = (typeof ROUTES)[number]['handler'];
/** A route that needs an API key (every route but the public pages and the token pages). */
export type ApiRoute = RouteDeclaration & { readonly permission: KeyPermission };

/** The routes that need an API key. */
export const API_ROUTES: readonly ApiRoute[] = ROUTES.filter(
  (route): route is (typeof ROUTES)[number] & ApiRoute =>
    route.permission === 'full_access' || route.permission === 'sending_access',
);

/** The token pages: no key, the token in their path is the credential (an email's share link). */
export const TOKEN_ROUTES: readonly RouteDeclaration[] = ROUTES.filter(
  (route) => route.permission === 'token',
);

/** The public pages: no key, only what is built into the service. */
export const PUBLIC_ROUTES: readonly RouteDeclaration[] = ROUTES.filter(
  (route) => route.permission === 'public',
);

/**
 * HEAD on every GET route that needs no key (the public pages): the same route and function as its
 * GET, so a HEAD answers the status and headers a GET would. The function answers the body too, and
 * the server drops it: Node's for the local gateway (keeping the GET's Content-Length), API Gateway's
 * on AWS. Not in ROUTES: each is its GET's route, and the catalog, the document and the bench see
 * that one. A route that needs a key answers HEAD as any unknown method (401, then 405).
 */
export const HEAD_ROUTES: readonly RouteDeclaration[] = ROUTES.filter(
  (route) => route.method === 'GET' && route.permission === 'public',
).map((route) => ({ ...route, method: 'HEAD' as const }));

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

const isVariable = (segment: string) => segment.startsWith('{') && segment.endsWith('}');

/** Path template → matcher; `{name}` matches one non-empty path segment. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (isVariable(w)) {
      if (!g) return undefined;
      params[w.slice(1, -1)] = decodeSegment(g);
    } else if (w !== g) return undefined;
  }
  return params;
}

/**
 * Which of two path templates API Gateway prefers for a path both match: the one with a literal
 * segment where the other has a variable, the first such segment from the left deciding
 * (`/v1/emails/metrics` before `/v1/emails/{id}`). Negative: `a` first. It orders every template
 * by its segments' kinds (literal before variable, from the left), a total order, so that ranking
 * a table does not depend on the order it was declared in.
 */
export function moreSpecific(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const av = isVariable(as[i] ?? '');
    const bv = isVariable(bs[i] ?? '');
    if (av !== bv) return av ? 1 : -1;
  }
  return as.length - bs.length;
}

/** Routes in the order a request is matched against them: the most specific first, as API Gateway picks. */
export const rankRoutes = <R extends RouteDeclaration>(routes: readonly R[]): R[] =>
  [...routes].sort((a, b) => moreSpecific(a.path, b.path));

/** The route a request goes to in this table (the most specific that matches), and its path's parameters. */
export function findRouteIn<R extends RouteDeclaration>(ranked: readonly R[], method: string, path: string) {
  for (const route of ranked) {
    const params = route.method === method.toUpperCase() ? matchPath(route.path, path) : undefined;
    if (params) return { route, params };
  }
  return undefined;
}

const RANKED = rankRoutes([...ROUTES, ...HEAD_ROUTES]);

/** The route a request goes to, and its path's parameters. */
export const findRoute = (method: string, path: string) => findRouteIn(RANKED, method, path);

/** The methods a path answers to, each once (empty: no such path). */
export const allowedMethods = (path: string): string[] => [
  ...new Set(
    [...ROUTES, ...HEAD_ROUTES].filter((route) => matchPath(route.path, path)).map((route) => route.method),
  ),
];
