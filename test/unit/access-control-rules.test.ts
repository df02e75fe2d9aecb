import { describe, expect, it } from 'vitest';
import { generateApiKey, hashToken, permits } from '../../functions/api-keys/model.js';
import { decide, rateLimitHeaders, windowOf } from '../../functions/api-keys/rate-limit.js';
import { createApiKeySchema } from '../../functions/api-keys/requests.js';
import { fingerprint, parseIdempotencyKey } from '../../functions/emails/idempotency.js';
import { jsonDepthExceeds } from '../../functions/http/middleware.js';
import { API_ROUTES, PUBLIC_ROUTES, ROUTES, TOKEN_ROUTES } from '../../functions/routes.js';

describe('permissions', () => {
  it('full_access may call everything; sending_access only what is marked sending', () => {
    expect(permits({ permission: 'full_access' }, 'full_access')).toBe(true);
    expect(permits({ permission: 'full_access' }, 'sending_access')).toBe(true);
    expect(permits({ permission: 'sending_access' }, 'sending_access')).toBe(true);
    expect(permits({ permission: 'sending_access' }, 'full_access')).toBe(false);
  });

  it('the route table marks only sending as sending_access', () => {
    const sending = ROUTES.filter((r) => r.permission === 'sending_access').map(
      (r) => `${r.method} ${r.path}`,
    );
    expect(sending).toEqual(['POST /v1/emails', 'POST /v1/emails/batch']);
    for (const route of API_ROUTES) expect(['full_access', 'sending_access']).toContain(route.permission);
  });

  it('needs a key on every route but the public pages (the OpenAPI document, its reference page and the console, all GET) and the token pages (a shared email)', () => {
    expect(PUBLIC_ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/openapi.json',
      'GET /docs',
      'GET /',
      'GET /assets/{file}',
    ]);
    expect(TOKEN_ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /share/{token}',
      'GET /unsubscribe/{token}',
      'POST /unsubscribe/{token}',
    ]);
    expect(API_ROUTES.length + PUBLIC_ROUTES.length + TOKEN_ROUTES.length).toBe(ROUTES.length);
  });
});

describe('tokens', () => {
  it('have a recognisable prefix and 256 random bits; only a SHA-256 is kept on the key', () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const { key, token } = generateApiKey('t', 'full_access', new Date());
      expect(token).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
      expect(key.hash).toBe(hashToken(token));
      expect(JSON.stringify(key)).not.toContain(token);
      tokens.add(token);
    }
    expect(tokens.size).toBe(50);
  });
});

describe('POST /v1/api-keys body', () => {
  it('defaults to full_access, trims the name, and allows domain_id only on sending keys', () => {
    expect(createApiKeySchema.parse({ name: ' ci ' })).toEqual({ name: 'ci', permission: 'full_access' });
    expect(
      createApiKeySchema.parse({
        name: 'shop',
        permission: 'sending_access',
        domain_id: 'dom_01m80n2x4cf0t8d1v2kq7w5mzs',
      }),
    ).toMatchObject({ domain_id: 'dom_01m80n2x4cf0t8d1v2kq7w5mzs' });
    for (const bad of [
      {},
      { name: '' },
      { name: 'x'.repeat(51) },
      { name: 'a\nb' },
      { name: 'a', permission: 'admin' },
      { name: 'a', domain_id: 'dom_01m80n2x4cf0t8d1v2kq7w5mzs' },
      { name: 'a', permission: 'sending_access', domain_id: 'acme.com' },
      { name: 'a', token: 'esk_x' },
    ]) {
      expect(createApiKeySchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('rate limit arithmetic (one-second windows)', () => {
  it('allows `limit` requests per window and says how many remain and when it resets', () => {
    const t = 1_700_000_000_250; // 250 ms into a second
    expect(decide(1, 10, t)).toEqual({ limit: 10, remaining: 9, resetSeconds: 1, allowed: true });
    expect(decide(10, 10, t)).toEqual({ limit: 10, remaining: 0, resetSeconds: 1, allowed: true });
    expect(decide(11, 10, t)).toEqual({ limit: 10, remaining: 0, resetSeconds: 1, allowed: false });
    expect(decide(50, 10, t).remaining).toBe(0);
  });

  it('counts each second apart, and resets at the next whole second', () => {
    expect(windowOf(1_700_000_000_999)).toBe(1_700_000_000);
    expect(windowOf(1_700_000_001_000)).toBe(1_700_000_001);
    expect(decide(11, 10, 1_700_000_000_999).resetSeconds).toBe(1);
    expect(decide(3, 5, 0, 60_000)).toMatchObject({ remaining: 2, resetSeconds: 60 });
  });

  it('headers carry limit, remaining and reset as integers', () => {
    expect(rateLimitHeaders(decide(4, 10, 0))).toEqual({
      'ratelimit-limit': '10',
      'ratelimit-remaining': '6',
      'ratelimit-reset': '1',
    });
  });
});

describe('Idempotency-Key', () => {
  it('takes 1 to 256 characters; empty or longer is refused', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('k'.repeat(256))).toHaveLength(256);
    expect(() => parseIdempotencyKey('')).toThrow(
      expect.objectContaining({ errorName: 'invalid_idempotency_key' }),
    );
    expect(() => parseIdempotencyKey('   ')).toThrow(expect.objectContaining({ statusCode: 400 }));
    expect(() => parseIdempotencyKey('k'.repeat(257))).toThrow(/257 characters/);
  });

  it('fingerprints a body independently of key order, and tells different bodies apart', () => {
    expect(fingerprint({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(fingerprint({ b: [1, { d: 3, c: 2 }], a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
    expect(fingerprint({ to: ['x', 'y'] })).not.toBe(fingerprint({ to: ['y', 'x'] }));
  });
});

describe('JSON nesting limit', () => {
  it('finds nesting beyond the limit without parsing, ignoring brackets inside strings', () => {
    expect(jsonDepthExceeds('{"a":[[1]]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[[[1]]]}', 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":"[[[[[[[[","b":"\\\\"}', 2)).toBe(false);
    expect(jsonDepthExceeds('['.repeat(100_000), 32)).toBe(true);
  });
});
