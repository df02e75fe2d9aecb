/**
 * Behind the optional front door (CloudFront + WAF), the API serves only what CloudFront forwarded:
 * a request sent straight to API Gateway skips the firewall's per-address rate limit, so it is
 * refused before its key is even looked up.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../functions/api-keys/model.js';
import type { ApiKeyRepository } from '../../functions/api-keys/ports.js';
import { makeHandler } from '../../functions/handlers/route-not-found.js';
import { FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';
import type { HttpDeps } from '../../functions/http/middleware.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';

const SECRET = 'a-front-door-secret-0123456789';

/** Keys in memory, counting lookups (a refused request must cost none). */
class MemoryKeys implements ApiKeyRepository {
  readonly keys = new Map<string, ApiKey>();
  lookups = 0;
  async findByHash(hash: string) {
    this.lookups++;
    return this.keys.get(hash) ?? null;
  }
  async put(key: ApiKey) {
    this.keys.set(key.hash, key);
  }
  async deleteByHash(hash: string) {
    this.keys.delete(hash);
  }
  async getById() {
    return null;
  }
  async list() {
    return { data: [], has_more: false };
  }
  async rename() {
    return false;
  }
  async touch() {}
  async authenticate(hash: string) {
    const key = this.keys.get(hash);
    return key ? { key, count: 1 } : null;
  }
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function setup(deps: Partial<HttpDeps> = {}) {
  const apiKeys = new MemoryKeys();
  const token = await fullAccessKey(apiKeys);
  const handler = makeHandler({ apiKeys, log: silent, ...deps });
  const call = async (headers: Record<string, string>) =>
    (await handler(
      httpEvent({ method: 'GET', path: '/v1/nowhere', token, headers }),
      context(),
    )) as APIGatewayProxyStructuredResultV2;
  return { apiKeys, call };
}

describe('the front door', () => {
  it('refuses, in the error shape and before any key lookup, a request without the header or with a wrong one', async () => {
    const { apiKeys, call } = await setup({ frontDoorSecret: SECRET });
    const attempts: Record<string, string>[] = [
      {},
      { [FRONT_DOOR_HEADER]: 'guess' },
      { [FRONT_DOOR_HEADER]: `${SECRET}x` },
    ];
    for (const headers of attempts) {
      const response = await call(headers);
      expect(response.statusCode).toBe(403);
      expect(parseBody(response)).toEqual({
        statusCode: 403,
        name: 'invalid_access',
        message: expect.stringContaining('front door'),
      });
    }
    expect(apiKeys.lookups).toBe(0);
  });

  it('serves a request CloudFront forwarded (its secret header), never echoing the secret', async () => {
    const { call } = await setup({ frontDoorSecret: SECRET });
    const response = await call({ [FRONT_DOOR_HEADER]: SECRET });
    expect(response.statusCode).toBe(404);
    expect(JSON.stringify(response)).not.toContain(SECRET);
  });

  it('is off without a secret: requests are served as before', async () => {
    const { call } = await setup();
    expect((await call({})).statusCode).toBe(404);
  });
});
