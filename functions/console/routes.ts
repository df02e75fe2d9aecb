import type { RouteDeclaration } from '../shared/route.js';

/**
 * The web console, as two public pages (shared/route.ts): its page, and its files by their
 * content-hashed names. No key to load them: the page signs in with a key, held in the browser.
 */

export const getConsoleRoute = {
  handler: 'get-console',
  method: 'GET',
  path: '/',
  permission: 'public',
  summary:
    'The web console: a page that signs in with an API key and shows emails, domains, keys… (no key needed to load it)',
  page: { type: 'text/html' },
} as const satisfies RouteDeclaration;

export const getConsoleAssetRoute = {
  handler: 'get-console-asset',
  method: 'GET',
  path: '/assets/{file}',
  permission: 'public',
  summary: 'A file of the web console, by its content-hashed name (no key needed)',
  page: { type: ['text/javascript', 'text/css'], notFound: true },
} as const satisfies RouteDeclaration;

export const CONSOLE_ROUTES = [getConsoleRoute, getConsoleAssetRoute] as const;
