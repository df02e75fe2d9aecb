/**
 * One key past one item's write ceiling: its rate window spread over rate shards (api-keys/rate-limit.ts),
 * with a fake key store that counts per shard and window as the table does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { newDynamoDbRateClient } from '../../functions/adapters/aws-clients.js';
import { type ApiKey, generateApiKey, hashToken } from '../../functions/api-keys/model.js';
import type { ApiKeyRepository, KeyCount } from '../../functions/api-keys/ports.js';
import {
  KeyRateLimiter,
  MEMO_OVER,
  refusalModel,
  SHARD_CAPACITY,
  seededRandom,
  shardCount,
  shardLimit,
} from '../../functions/api-keys/rate-limit.js';
import { makeHandler } from '../../functions/handlers/route-not-found.js';
import { context, httpEvent, parseBody } from '../support/events.js';

const T0 = 1_700_000_000_000;

/** Counts per shard and window, as the shard items do; `throttle` answers for chosen shards. */
class ShardedKeys implements Pick<ApiKeyRepository, 'authenticate'> {
  readonly counts = new Map<string, number>();
  readonly calls: number[] = [];
  throttle = new Set<number>();
  constructor(readonly key: ApiKey | null) {}
  async authenticate(
    _hash: string,
    window: number,
    _at: string,
    shard = 0,
  ): Promise<KeyCount | 'throttled' | null> {
    this.calls.push(shard);
    if (!this.key) return null;
    if (this.throttle.has(shard)) return 'throttled';
    const at = `${window}#${shard}`;
    const count = (this.counts.get(at) ?? 0) + 1;
    this.counts.set(at, count);
    return { key: this.key, count };
  }
}

const { key } = generateApiKey('hot', 'full_access', new Date(T0));

describe('how many shards, and each one’s share', () => {
  it('one shard (the key’s own item) up to SHARD_CAPACITY a second, then one per SHARD_CAPACITY', () => {
    expect(SHARD_CAPACITY).toBe(400);
    expect([1, 10, 400, 401, 800, 801, 1000, 5000, 10_000].map(shardCount)).toEqual([
      1, 1, 1, 2, 2, 3, 3, 13, 25,
    ]);
    // At most MAX_RATE_SHARDS: a revocation writes each, and 64 partitions carry 64,000/s.
    expect([25_600, 25_601, 1_000_000].map(shardCount)).toEqual([64, 64, 64]);
  });

  it('splits the limit evenly, the shares summing to exactly the limit', () => {
    for (const limit of [1, 10, 401, 999, 1000, 5000, 5003, 12_345]) {
      const shards = shardCount(limit);
      const shares = Array.from({ length: shards }, (_, k) => shardLimit(limit, shards, k));
      expect(
        shares.reduce((a, b) => a + b, 0),
        String(limit),
      ).toBe(limit);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      expect(Math.max(...shares)).toBeLessThanOrEqual(SHARD_CAPACITY);
    }
  });
});

describe('KeyRateLimiter', () => {
  it('at the default limit, every request is one write to shard 0, and the 11th in a second is refused', async () => {
    const keys = new ShardedKeys(key);
    const limiter = new KeyRateLimiter(keys, 10);
    const outcomes = [];
    for (let i = 0; i < 11; i++) outcomes.push(await limiter.admit(key.hash, T0 + i));
    expect(keys.calls).toEqual(new Array(11).fill(0));
    expect(outcomes.map((o) => 'state' in o && o.state.allowed)).toEqual([
      ...new Array(10).fill(true),
      false,
    ]);
    expect(outcomes[0]).toMatchObject({ key, state: { limit: 10, remaining: 9, allowed: true } });
  });

  it('5,000 a second: accepts exactly the limit in a window however many come, one write per accepted request', async () => {
    const keys = new ShardedKeys(key);
    const limiter = new KeyRateLimiter(keys, 5000, seededRandom(7));
    expect(limiter.shards).toBe(13);
    let accepted = 0;
    let acceptedWrites = 0;
    for (let i = 0; i < 12_000; i++) {
      const before = keys.calls.length;
      const outcome = await limiter.admit(key.hash, T0 + (i % 1000) / 12);
      if ('state' in outcome && outcome.state.allowed) {
        accepted++;
        acceptedWrites += keys.calls.length - before;
      }
    }
    expect(accepted).toBe(5000);
    // A second write only when the first shard refused.
    expect(acceptedWrites / accepted).toBeLessThan(1.1);
    expect(new Set(keys.calls).size).toBe(13);
  });

  it('a shard that refuses sends the request to one other shard, and only one', async () => {
    const keys = new ShardedKeys(key);
    const limiter = new KeyRateLimiter(keys, 1000, () => 0); // always shard 0 first, then shard 1
    const share0 = shardLimit(1000, 3, 0);
    keys.counts.set(`${T0 / 1000}#0`, share0); // shard 0 full
    keys.calls.length = 0;
    const accepted = await limiter.admit(key.hash, T0);
    expect(keys.calls).toEqual([0, 1]);
    expect(accepted).toMatchObject({ key, state: { allowed: true } });
    keys.counts.set(`${T0 / 1000}#1`, 10_000); // shard 1 full too
    keys.calls.length = 0;
    const refused = await limiter.admit(key.hash, T0);
    expect(keys.calls).toEqual([0, 1]);
    expect(refused).toMatchObject({ key, state: { allowed: false, remaining: 0, resetSeconds: 1 } });
  });

  it('a throttled shard is a refusal of that shard, not an error: another shard takes the request, or the answer is 429', async () => {
    const keys = new ShardedKeys(key);
    keys.throttle = new Set([0]);
    const limiter = new KeyRateLimiter(keys, 1000, () => 0);
    expect(await limiter.admit(key.hash, T0)).toMatchObject({ key, state: { allowed: true } });
    keys.throttle = new Set([0, 1]);
    const refused = await limiter.admit(key.hash, T0 + 1);
    expect(refused).toMatchObject({ state: { allowed: false, limit: 1000 } });
    // One shard: throttled is 429 too.
    const single = new ShardedKeys(key);
    single.throttle = new Set([0]);
    expect(await new KeyRateLimiter(single, 10).admit(key.hash, T0)).toMatchObject({
      key: undefined,
      state: { allowed: false, remaining: 0 },
    });
  });

  it('remembers, per instance, a key throttled or far over its share, and refuses it without a write until the window ends', async () => {
    const keys = new ShardedKeys(key);
    const limiter = new KeyRateLimiter(keys, 10);
    for (let i = 0; i < 10; i++) await limiter.admit(key.hash, T0);
    // Just over the share: refused, but not remembered (it may be a near-limit key's bad luck).
    await limiter.admit(key.hash, T0 + 1);
    expect(keys.calls).toHaveLength(11);
    while ((keys.counts.get(`${T0 / 1000}#0`) ?? 0) <= 10 * MEMO_OVER) await limiter.admit(key.hash, T0 + 2);
    const writes = keys.calls.length;
    for (let i = 0; i < 50; i++)
      expect(await limiter.admit(key.hash, T0 + 500)).toMatchObject({ state: { allowed: false } });
    expect(keys.calls).toHaveLength(writes);
    // The next window writes again (and is accepted).
    expect(await limiter.admit(key.hash, T0 + 1000)).toMatchObject({ key, state: { allowed: true } });
    expect(keys.calls).toHaveLength(writes + 1);
    // Throttling is remembered at once.
    keys.throttle = new Set([0]);
    await limiter.admit(key.hash, T0 + 2000);
    keys.throttle.clear();
    expect(await limiter.admit(key.hash, T0 + 2001)).toMatchObject({ state: { allowed: false } });
    expect(keys.calls).toHaveLength(writes + 2);
  });

  it('no such key (or revoked): null on the shard tried, so a 401', async () => {
    const keys = new ShardedKeys(null);
    expect(await new KeyRateLimiter(keys, 5000).admit('nohash', T0)).toEqual({ key: null });
    expect(keys.calls).toHaveLength(1);
  });

  it('ratelimit-remaining is the shard’s remaining share scaled to the whole key', async () => {
    const keys = new ShardedKeys(key);
    const limiter = new KeyRateLimiter(keys, 5000, () => 0);
    // Shard 0's share is 385 (5,000 over 13, the first 5 shards one more): its first request leaves 384/385.
    expect(await limiter.admit(key.hash, T0)).toMatchObject({
      state: { limit: 5000, remaining: Math.floor((384 * 5000) / 385), allowed: true },
    });
  });
});

describe('what a key at its limit sees (Poisson arrivals, one-second windows)', () => {
  it('at 90 % of 5,000 a second nothing is refused; at 100 % about 1 %, near a single counter’s floor', () => {
    const at90 = refusalModel({ limit: 5000, load: 0.9, windows: 100 });
    expect(at90.refusedFraction).toBeLessThan(1e-4);
    expect(at90.writesPerRequest).toBeLessThan(1.001);
    const at100 = refusalModel({ limit: 5000, load: 1, windows: 100 });
    const floor = refusalModel({ limit: 5000, load: 1, windows: 100, shards: 1 });
    const noRetry = refusalModel({ limit: 5000, load: 1, windows: 100, retry: false });
    expect(at100.refusedFraction).toBeGreaterThanOrEqual(floor.refusedFraction);
    expect(at100.refusedFraction).toBeLessThan(0.015);
    // The second try halves the refusals of picking one shard at random.
    expect(at100.refusedFraction).toBeLessThan(noRetry.refusedFraction * 0.7);
    expect(at100.writesPerRequest).toBeLessThan(1.03);
    expect(at100.busiestShardWritesPerSecond).toBeLessThan(500);
  });

  it('an abusive client at 10 times the limit keeps every shard under 1,000 writes a second (instances remember)', () => {
    const abuse = refusalModel({ limit: 5000, load: 10, windows: 20, instances: 100 });
    expect(abuse.refusedFraction).toBeCloseTo(0.9, 2);
    expect(abuse.busiestShardWritesPerSecond).toBeLessThan(800);
    // Without remembering, each refused request costs two writes and shards pass the ceiling.
    const unremembered = refusalModel({ limit: 5000, load: 10, windows: 5 });
    expect(unremembered.busiestShardWritesPerSecond).toBeGreaterThan(1000);
  });
});

describe('a throttled rate write', () => {
  it('answers 429 with Retry-After and the rate headers, never 500', async () => {
    const { key: stored, token } = generateApiKey('hot', 'full_access', new Date(T0));
    const keys = new ShardedKeys(stored);
    keys.throttle = new Set([0]);
    const apiKeys = keys as unknown as ApiKeyRepository;
    const handler = makeHandler({
      apiKeys,
      rateLimit: { perSecond: 10 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    const response = (await handler(
      httpEvent({ method: 'GET', path: '/v1/nowhere', token }),
      context(),
    )) as APIGatewayProxyStructuredResultV2;
    expect(hashToken(token)).toBe(stored.hash);
    expect(response.statusCode).toBe(429);
    expect(parseBody(response)).toMatchObject({ name: 'rate_limit_exceeded' });
    expect(response.headers).toMatchObject({
      'retry-after': '1',
      'ratelimit-limit': '10',
      'ratelimit-remaining': '0',
    });
  });

  describe('the rate client', () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    /** A DynamoDB that always answers `type` with `status`; how many requests reached it. */
    async function answering(status: number, type: string) {
      const seen = { requests: 0 };
      server = createServer((req, res) => {
        seen.requests++;
        req.resume();
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: type }));
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      // The client reads its endpoint and credentials from the environment, as on Lambda.
      Object.assign(process.env, {
        AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      });
      const client = newDynamoDbRateClient();
      return { client, seen };
    }

    it('does not retry throttling, and retries a server error once', async () => {
      for (const [status, type, requests] of [
        [400, 'ProvisionedThroughputExceededException', 1],
        [400, 'ThrottlingException', 1],
        [500, 'InternalServerError', 2],
      ] as const) {
        const { client, seen } = await answering(status, type);
        await expect(client.send(new ListTablesCommand({}))).rejects.toMatchObject({ name: type });
        expect(seen.requests, type).toBe(requests);
        client.destroy();
        await new Promise<void>((resolve) => server?.close(() => resolve()));
        server = undefined;
      }
    });
  });
});
