import type * as z from 'zod/mini';
import type { RouteAccess } from './function-spec.js';

/**
 * Routes are declared once, each in its concept's `routes.ts`, as data: its method and path, who may
 * call it, what it takes and answers, and what its function may do on AWS. The route table
 * (functions/routes.ts), the catalog of functions (functions/catalog.ts), the OpenAPI document
 * (api-reference/document.ts), the stack's routes and the bench's requests are all built from these
 * declarations. A handler imports its own route's declaration and nothing of its siblings: each is
 * its own export, a plain object (`{…} as const satisfies RouteDeclaration`, so a bundle keeps only
 * the ones it uses), and its schemas are loaded on demand.
 */

/** What a key must be to call a route: `full_access` keys may call every route, `sending_access` keys only those marked so. */
export type KeyPermission = 'sending_access' | 'full_access';

/**
 * Who may call a route: a key with this permission, or anyone (`public`: a page built into the
 * service, whose function reads no table, no queue and no request input, so nothing it answers
 * depends on who asks), or whoever holds the token in its path (`token`: no key; the token is the
 * credential, looked up by its hash, as an email's share link: http/token.ts).
 */
export type RoutePermission = KeyPermission | 'public' | 'token';

/** A declared route's method. HEAD is never declared: routes.ts derives it from the GET routes that need no key. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** The schemas a route's request and answer are checked against (its handler validates with the same objects). */
export interface RouteSchemas {
  /** The query string's schema (each of its properties one query parameter). */
  readonly query?: z.ZodMiniType;
  /** The JSON body's schema. */
  readonly body?: z.ZodMiniType;
  /** The body as JSON Schema, when it is not one zod schema (a send by template or not; a batch). */
  readonly bodyJsonSchema?: () => Record<string, unknown>;
  /** A multipart body's form fields as JSON Schema (a `multipart` route; its JSON body is `body`). */
  readonly formJsonSchema?: () => Record<string, unknown>;
  /** The successful answer's schema (a JSON route). */
  readonly answer?: z.ZodMiniType;
}

/** What a public page answers (`permission: 'public'`): its media types, and whether it may answer 404. */
export interface PageAnswer {
  readonly type: string | readonly string[];
  readonly notFound?: true;
}

export interface RouteDeclaration<Handler extends string = string> {
  /** Its function's name: the handler module in functions/handlers/ and its entry in the catalog. */
  readonly handler: Handler;
  readonly method: HttpMethod;
  readonly path: string;
  readonly permission: RoutePermission;
  /** One line, for the route table and the document. */
  readonly summary: string;
  /**
   * The request body it takes: JSON, at most `maxBytes` (default: the middleware's MAX_BODY_BYTES);
   * `optional`: a request without one is taken as `{}`.
   */
  readonly body?:
    | { readonly type: 'json'; readonly maxBytes?: number; readonly optional?: true }
    /**
     * A `multipart/form-data` form (Resend's file uploads: a contact import's CSV), or a JSON object
     * in its place: the handler receives `{ form }` or `{ json }` (http/multipart.ts). At most
     * `maxBytes`, counted as sent (before API Gateway's base64).
     */
    | { readonly type: 'multipart'; readonly maxBytes: number };
  /** The statuses it answers on success (the first is the usual one). Default: 200. */
  readonly ok?: readonly [200 | 201, ...(200 | 201)[]];
  /** Error statuses it may answer beyond those every route with a key may (api-reference/document.ts). */
  readonly errors?: readonly number[];
  /** Left out of the request logs (the log routes' own reads). */
  readonly logged?: false;
  /** Its request's and answer's schemas, loaded on demand (the document, the contract test). */
  readonly schemas?: () => Promise<RouteSchemas>;
  /** A public or token page's answer. */
  readonly page?: PageAnswer;
  /** What its function may do on AWS beyond every API function's key check (none for a public page). */
  readonly access?: RouteAccess;
}

/** What the OpenAPI document says of a route beyond its declaration: words and examples, kept apart from it. */
export interface RouteDocs {
  /** More words than the summary: rules, limits, what is ours beside Resend's. */
  readonly description?: string;
  /** What a successful answer means. */
  readonly ok: string;
  /** An example of the successful answer (a JSON route). */
  readonly example?: unknown;
  /** An example of the request body. */
  readonly requestExample?: unknown;
  /** Headers the route reads, besides Authorization. */
  readonly headers?: readonly { name: string; description: string; schema: Record<string, unknown> }[];
  /** A public page's body as JSON Schema (default: a string). */
  readonly pageSchema?: Record<string, unknown>;
}

/** A concept's docs: one entry per route it declares (a route without one fails the type check). */
export type DocsOf<Routes extends readonly RouteDeclaration[]> = Record<Routes[number]['handler'], RouteDocs>;
