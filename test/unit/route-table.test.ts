import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { TYPICAL } from '../../bin/bench/typical.js';
import { buildDocument } from '../../functions/api-reference/document.js';
import { buildCatalog, FUNCTIONS, WORKERS } from '../../functions/catalog.js';
import { ROUTE_DOCS } from '../../functions/route-docs.js';
import {
  allowedMethods,
  FALLBACK_HANDLER,
  findRoute,
  findRouteIn,
  HEAD_ROUTES,
  moreSpecific,
  ROUTES,
  rankRoutes,
} from '../../functions/routes.js';
import { named } from '../../functions/shared/answers.js';
import type { RouteDeclaration, RouteDocs } from '../../functions/shared/route.js';

type Json = Record<string, unknown>;
const isVariable = (segment: string) => segment.startsWith('{');

/** A path both templates match, if there is one: each position the literal either has, or a value. */
function commonPath(a: string, b: string): string | undefined {
  const as = a.split('/');
  const bs = b.split('/');
  if (as.length !== bs.length) return undefined;
  const segments: string[] = [];
  for (let i = 0; i < as.length; i++) {
    const x = as[i] as string;
    const y = bs[i] as string;
    if (!isVariable(x) && !isVariable(y) && x !== y) return undefined;
    segments.push(!isVariable(x) ? x : !isVariable(y) ? y : `value${i}`);
  }
  return segments.join('/');
}

const shuffled = <T>(items: readonly T[], seed: number): T[] => {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
};

describe('the route table, ranked as API Gateway ranks routes', () => {
  it('sends every path two routes could both take to the more specific one (a literal segment before a path variable), whatever the order they were declared in', () => {
    let pairs = 0;
    for (const a of ROUTES)
      for (const b of ROUTES) {
        if (a === b || a.method !== b.method) continue;
        const path = commonPath(a.path, b.path);
        if (!path) continue;
        pairs++;
        // Two templates both match it: one has a literal where the other has a variable.
        expect(moreSpecific(a.path, b.path), `${a.path} ${b.path}`).not.toBe(0);
        const expected = moreSpecific(a.path, b.path) < 0 ? a : b;
        expect(findRoute(a.method, path)?.route.handler, `${a.method} ${path}`).toBe(expected.handler);
        for (const seed of [1, 2, 3, 4, 5]) {
          const table = rankRoutes(shuffled(ROUTES, seed));
          expect(findRouteIn(table, a.method, path)?.route, `${a.method} ${path} (order ${seed})`).toBe(
            findRoute(a.method, path)?.route,
          );
        }
      }
    // /v1/emails/metrics beside /v1/emails/{id}, /v1/emails/batch beside nothing, and the like.
    expect(pairs).toBeGreaterThan(0);
    expect(findRoute('GET', '/v1/emails/metrics')?.route.handler).toBe('get-email-metrics');
    expect(findRoute('GET', '/v1/emails/em_123')?.route.handler).toBe('get-email');
  });

  it('names a path variable alike wherever routes share the segments before it, as API Gateway requires', () => {
    // HTTP APIs refuse a route whose variable sits where another route has one of another name
    // (ConflictException: "has a conflicting variable on the same hierarchical level", as
    // plutomi/plutomi#271 met deploying `…/{stageId}/…` beside `…/{stage_id}/…`): locally both work.
    const named = new Map<string, string>();
    const clashes: string[] = [];
    for (const route of ROUTES) {
      const segments = route.path.split('/');
      segments.forEach((segment, i) => {
        if (!isVariable(segment)) return;
        const parent = segments
          .slice(0, i)
          .map((s) => (isVariable(s) ? '{}' : s))
          .join('/');
        const seen = named.get(parent);
        if (seen === undefined) named.set(parent, segment);
        else if (seen !== segment)
          clashes.push(`${route.method} ${route.path}: ${segment} where others have ${seen}`);
      });
    }
    expect(clashes).toEqual([]);
  });

  it('puts a literal route declared after a path variable first: /v1/emails/receiving beside /v1/emails/{id}', () => {
    const receiving: RouteDeclaration = {
      handler: 'list-received-emails',
      method: 'GET',
      path: '/v1/emails/receiving',
      permission: 'full_access',
      summary: 'A literal route declared last',
    };
    for (const table of [
      [...ROUTES, receiving],
      [receiving, ...ROUTES],
    ]) {
      const ranked = rankRoutes(table);
      expect(findRouteIn(ranked, 'GET', '/v1/emails/receiving')?.route.handler).toBe('list-received-emails');
      expect(findRouteIn(ranked, 'GET', '/v1/emails/em_1')?.route.handler).toBe('get-email');
    }
  });
});

describe('HEAD', () => {
  it('goes to the function of every public GET route, and of no route that needs a key', () => {
    const pages = ROUTES.filter((route) => route.method === 'GET' && route.permission === 'public');
    expect(pages.map((route) => route.path)).toEqual(
      expect.arrayContaining(['/v1/openapi.json', '/docs', '/', '/assets/{file}']),
    );
    expect(HEAD_ROUTES.map((route) => `${route.method} ${route.path} ${route.handler}`)).toEqual(
      pages.map((route) => `HEAD ${route.path} ${route.handler}`),
    );
    expect(findRoute('HEAD', '/v1/openapi.json')?.route.handler).toBe('get-openapi');
    expect(findRoute('HEAD', '/docs')?.route.handler).toBe('get-api-reference');
    expect(findRoute('HEAD', '/assets/app-1234.js')?.route.handler).toBe('get-console-asset');
    expect(allowedMethods('/docs')).toEqual(['GET', 'HEAD']);
    // A route with a key: the fallback, 401 without one, then 405 naming its methods (no HEAD).
    expect(findRoute('HEAD', '/v1/emails')).toBeUndefined();
    expect(allowedMethods('/v1/emails')).not.toContain('HEAD');
  });
});

describe('the declarations, the one place a route is declared', () => {
  const widgets: RouteDeclaration = {
    handler: 'list-widgets',
    method: 'GET',
    path: '/v1/widgets',
    permission: 'full_access',
    summary: 'List widgets',
    errors: [404],
    schemas: async () => ({
      query: z.strictObject({ colour: z.optional(z.string()) }),
      answer: z.object({ object: z.literal('list'), data: z.array(z.string()) }),
    }),
    access: { env: ['CONTENT_BUCKET'], actions: ['Query'], indexes: ['emailsByTime'] },
  };
  const docs: RouteDocs = { ok: 'The widgets.', example: { object: 'list', data: ['a'] } };

  it('build the route table, the catalog and the OpenAPI document: a route added in one place appears in all', async () => {
    const routes = [...ROUTES, widgets];
    expect(findRouteIn(rankRoutes(routes), 'GET', '/v1/widgets')?.route).toBe(widgets);
    const catalog = buildCatalog(routes, WORKERS);
    expect(catalog['list-widgets']).toEqual({
      description: 'GET /v1/widgets',
      env: ['TABLE_NAME', 'RATE_LIMIT_PER_SECOND', 'CONTENT_BUCKET'],
      optionalEnv: ['REQUEST_LOGS', 'REQUEST_LOG_BODIES'],
      table: { actions: ['GetItem', 'UpdateItem', 'Query'], indexes: ['emails-by-time-keys'] },
    });
    const document = await buildDocument(routes, { ...ROUTE_DOCS, 'list-widgets': docs });
    const operation = ((document.paths as Json)['/v1/widgets'] as Json).get as Json;
    expect(operation).toMatchObject({ operationId: 'list-widgets', 'x-permission': 'full_access' });
    expect((operation.parameters as Json[]).map((p) => p.name)).toEqual(['colour']);
    expect(Object.keys(operation.responses as Json)).toContain('404');
    // Without its words and example the document is not built: the docs are kept apart, not optional.
    await expect(buildDocument(routes, ROUTE_DOCS)).rejects.toThrow(/no docs for the route list-widgets/);
  });

  it('give every route of the table a handler, a function in the catalog and a typical request for the bench', () => {
    for (const route of ROUTES) {
      expect(existsSync(`functions/handlers/${route.handler}.ts`), route.handler).toBe(true);
      expect(FUNCTIONS[route.handler], route.handler).toBeDefined();
      expect(TYPICAL[route.handler], route.handler).toBeDefined();
    }
    expect(Object.keys(FUNCTIONS).sort()).toEqual(Object.keys(TYPICAL).sort());
    expect(FUNCTIONS[FALLBACK_HANDLER]).toBeDefined();
    // One declaration per handler and per method and path.
    expect(new Set(ROUTES.map((r) => r.handler)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  it("are read in the table's order, so the document is the same bytes on every instance (its ETag too)", async () => {
    const late: RouteDeclaration = {
      handler: 'get-late',
      method: 'GET',
      path: '/v1/late',
      permission: 'full_access',
      summary: 'Its schemas load slowly',
      schemas: async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return { answer: named('LateAnswer', z.object({ late: z.boolean() })) };
      },
    };
    const early: RouteDeclaration = {
      handler: 'get-early',
      method: 'GET',
      path: '/v1/early',
      permission: 'full_access',
      summary: 'Its schemas load at once',
      schemas: async () => ({ answer: named('EarlyAnswer', z.object({ early: z.boolean() })) }),
    };
    const docs = { 'get-late': { ok: 'Late.' }, 'get-early': { ok: 'Early.' } };
    const document = await buildDocument([late, early], docs);
    const ids = Object.keys((document.components as { schemas: Json }).schemas);
    expect(ids.indexOf('LateAnswer')).toBeLessThan(ids.indexOf('EarlyAnswer'));
  });
});
