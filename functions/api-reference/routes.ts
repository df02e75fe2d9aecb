import type { RouteDeclaration } from '../shared/route.js';

/**
 * The API described, as two public pages (shared/route.ts): no key, nothing but what is built into
 * the service. Their functions read no table, no queue and no request input.
 */

export const getOpenapiRoute = {
  handler: 'get-openapi',
  method: 'GET',
  path: '/v1/openapi.json',
  permission: 'public',
  summary: 'This API described: an OpenAPI 3.1 document (no key needed)',
  page: { type: 'application/json' },
} as const satisfies RouteDeclaration;

export const getApiReferenceRoute = {
  handler: 'get-api-reference',
  method: 'GET',
  path: '/docs',
  permission: 'public',
  summary: 'The API reference, a page made from the OpenAPI document (no key needed)',
  page: { type: 'text/html' },
} as const satisfies RouteDeclaration;

export const API_REFERENCE_ROUTES = [getOpenapiRoute, getApiReferenceRoute] as const;
