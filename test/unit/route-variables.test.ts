/**
 * API Gateway's HTTP APIs refuse two routes whose paths have differently named variables at the
 * same level under the same parent ("has a conflicting variable on the same hierarchical level":
 * a ConflictException at deploy), as REST APIs do ("A sibling ({bizId}) of this resource already
 * has a variable path part -- only one is allowed"; aws-apigateway-importer#202). So
 * `/v1/contacts/{id}` and `/v1/contacts/{contact_id}/segments` cannot both be routes: every route
 * names the variable at one place alike.
 */
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/routes.js';

describe('path variables', () => {
  it('are named alike wherever routes share the path before them', () => {
    const named = new Map<string, Set<string>>();
    for (const { path } of ROUTES) {
      const segments = path.split('/');
      segments.forEach((segment, i) => {
        if (!segment.startsWith('{')) return;
        const parent = segments.slice(0, i).join('/');
        named.set(parent, (named.get(parent) ?? new Set()).add(segment));
      });
    }
    const conflicts = [...named]
      .filter(([, names]) => names.size > 1)
      .map(([p, n]) => `${p}/${[...n].join('|')}`);
    expect(conflicts).toEqual([]);
  });
});
