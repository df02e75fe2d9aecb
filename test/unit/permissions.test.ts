import { describe, expect, it } from 'vitest';
import { ROUTE_PERMISSIONS } from '../../functions/permissions.js';
import { ROUTES } from '../../functions/routes.js';

describe("the route table's permission column (functions/permissions.ts)", () => {
  it('names each route’s handler once, and no handler without a route', () => {
    expect(Object.keys(ROUTE_PERMISSIONS).sort()).toEqual(ROUTES.map((route) => route.handler).sort());
  });

  it('is what each route carries: only the sends are open to sending keys', () => {
    for (const route of ROUTES)
      expect(route.permission, route.handler).toBe(ROUTE_PERMISSIONS[route.handler as never]);
    expect(ROUTES.filter((r) => r.permission === 'sending_access').map((r) => r.handler)).toEqual([
      'send-email',
      'send-batch',
    ]);
  });
});
