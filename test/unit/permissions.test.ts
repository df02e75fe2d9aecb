import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/routes.js';

/** Each concept's routes.ts, by path (vite's glob import: one static import per file). */
const CONCEPT_ROUTES = (
  import.meta as ImportMeta & { glob: (pattern: string, options: { eager: true }) => Record<string, unknown> }
).glob('../../functions/*/routes.ts', { eager: true });

describe("the routes' permissions (each declared in its concept's routes.ts)", () => {
  it('opens only the sends to sending keys, and needs a key everywhere but the public pages', () => {
    expect(ROUTES.filter((r) => r.permission === 'sending_access').map((r) => r.handler)).toEqual([
      'send-email',
      'send-batch',
    ]);
    expect(ROUTES.filter((r) => r.permission === 'public').map((r) => r.handler)).toEqual([
      'get-openapi',
      'get-api-reference',
      'get-console',
      'get-console-asset',
    ]);
    expect(ROUTES.filter((r) => r.permission === 'token').map((r) => r.handler)).toEqual([
      'get-shared-email',
      'unsubscribe-page',
      'unsubscribe',
    ]);
  });

  it("is checked by each handler against its own route's declaration, the one the table holds", async () => {
    for (const route of ROUTES) {
      const source = readFileSync(`functions/handlers/${route.handler}.ts`, 'utf8');
      if (route.permission === 'public') {
        expect(source, route.handler).toMatch(/public(File)?Handler/);
        continue;
      }
      if (route.permission === 'token') {
        // No key: the token chain (http/token.ts), given its own declaration.
        const passed = /tokenPageHandler\(\s*deps,\s*(\w+)/.exec(source)?.[1];
        expect(passed, route.handler).toBeDefined();
        expect(source, route.handler).not.toMatch(/httpHandler\(/);
        continue;
      }
      // The handler passes its declaration to the chain (a const of its concept's routes.ts), or to
      // the handler that serves it too (verify-domain, get-domain's).
      const passed = /(?:httpHandler\(\s*deps|makeGet\w+\(deps),\s*(\w+)/.exec(source)?.[1];
      expect(passed, route.handler).toBeDefined();
      const imported = new RegExp(
        `import \\{[^}]*\\b${passed}\\b[^}]*\\} from '\\.\\./([\\w-]+)/routes\\.js'`,
      ).exec(source);
      if (passed === 'route') continue; // get-domain's, given by itself or verify-domain
      expect(imported, `${route.handler} imports ${passed} from its concept's routes.ts`).not.toBeNull();
      const declarations = CONCEPT_ROUTES[`../../functions/${imported?.[1]}/routes.ts`] as Record<
        string,
        unknown
      >;
      expect(declarations[passed as string], route.handler).toBe(route);
    }
  });
});
