/**
 * A key's rate shards in the table (dynalite): counts across shards, revocation on every shard,
 * shards created on first use after the limit was raised.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { KeyRateLimiter, seededRandom, shardCount } from '../../functions/api-keys/rate-limit.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
beforeAll(async () => {
  table = await startTestTable();
});
afterAll(() => table.stop());

const T0 = 1_700_000_000_000;
const window = T0 / 1000;
const at = new Date(T0).toISOString();
/** A function instance's repository, writing `shards` shards with each new key (as apiDeps builds it). */
const repository = (limit: number) =>
  new DynamoApiKeyRepository(table.db, table.tableName, { shards: shardCount(limit) });
const item = async (pk: string) =>
  (await table.db.send(new GetCommand({ TableName: table.tableName, Key: { pk, sk: keys.apiKeySk } }))).Item;

describe('rate shards in the table', () => {
  it('a new key gets its shards, each with what authentication reads; a default key only its own item', async () => {
    const { key } = generateApiKey('hot', 'sending_access', new Date(T0), {
      id: 'dom_x',
      domain: 'acme.com',
    });
    await repository(1000).put(key);
    expect(await item(keys.apiKey(key.hash))).toMatchObject({ id: key.id, rs: new Set([1, 2]) });
    for (const shard of [1, 2])
      expect(await item(keys.apiKeyShard(key.hash, shard))).toEqual({
        pk: keys.apiKeyShard(key.hash, shard),
        sk: keys.apiKeySk,
        id: key.id,
        name: 'hot',
        permission: 'sending_access',
        created_at: key.created_at,
        domain_id: 'dom_x',
        domain: 'acme.com',
      });
    expect(await item(keys.apiKeyShard(key.hash, 3))).toBeUndefined();
    const { key: plain } = generateApiKey('default', 'full_access', new Date(T0));
    await repository(10).put(plain);
    expect((await item(keys.apiKey(plain.hash)))?.rs).toBeUndefined();
    expect(await item(keys.apiKeyShard(plain.hash, 1))).toBeUndefined();
  });

  it('three instances at 1,000 a second accept exactly 1,000 of 1,600 requests in one window, across the shards', async () => {
    const { key } = generateApiKey('hot', 'full_access', new Date(T0));
    await repository(1000).put(key);
    const instances = [1, 2, 3].map((seed) => new KeyRateLimiter(repository(1000), 1000, seededRandom(seed)));
    let accepted = 0;
    for (let i = 0; i < 1600; i += 8) {
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, j) => instances[(i + j) % 3]?.admit(key.hash, T0 + i / 2)),
      );
      for (const outcome of outcomes) if (outcome && 'state' in outcome && outcome.state.allowed) accepted++;
    }
    expect(accepted).toBe(1000);
    const counts = await Promise.all(
      [0, 1, 2].map((s) => item(s === 0 ? keys.apiKey(key.hash) : keys.apiKeyShard(key.hash, s))),
    );
    // Every shard took its share (334, 333, 333) and more (the refused requests' writes).
    for (const counted of counts) expect(Number(counted?.[`rc${window}`])).toBeGreaterThan(333);
  });

  it("lists keys with their 64 shards each, past BatchGetItem's 100 keys a call (a 500 before)", async () => {
    const hot = repository(1_000_000);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { key } = generateApiKey(`busy-${i}`, 'full_access', new Date(T0 + i));
      await hot.put(key);
      made.push(key.id);
    }
    // Beside its own item, each has 63 shards: 189 shard items for one page.
    const listed = await hot.list({ limit: 100, offset: 0 });
    expect(listed.data.map((k) => k.id)).toEqual(expect.arrayContaining(made));
  });

  it('a revoked key is refused on every shard, by instances that used them and by new ones, and gains no shard', async () => {
    const { key } = generateApiKey('hot', 'full_access', new Date(T0));
    const used = repository(1000);
    await used.put(key);
    for (const shard of [0, 1, 2])
      expect(await used.authenticate(key.hash, window, at, shard)).toMatchObject({ key: { id: key.id } });
    await used.deleteByHash(key.hash);
    for (const shard of [0, 1, 2]) {
      expect(await used.authenticate(key.hash, window, at, shard)).toBeNull();
      expect(await repository(1000).authenticate(key.hash, window, at, shard)).toBeNull();
    }
    // An instance with a higher limit: its shard is not created for a key that is gone.
    expect(await repository(5000).authenticate(key.hash, window, at, 7)).toBeNull();
    expect(await item(keys.apiKeyShard(key.hash, 7))).toBeUndefined();
    expect(await item(keys.apiKey(key.hash))).toBeUndefined();
    expect(await item(keys.apiKeyShard(key.hash, 1))).toMatchObject({
      revoked: true,
      expires_at: expect.any(Number),
    });
    expect(await used.getById(key.id)).toBeNull();
  });

  it('raising the limit needs no migration: a shard is created on first use, counted in listings, and revoked with the key', async () => {
    const { key } = generateApiKey('old', 'full_access', new Date(T0));
    const before = repository(10);
    await before.put(key);
    const after = repository(5000);
    const counted = await after.authenticate(key.hash, window, at, 9);
    expect(counted).toEqual({ key: expect.objectContaining({ id: key.id, name: 'old' }), count: 1 });
    expect(await item(keys.apiKey(key.hash))).toMatchObject({ rs: new Set([9]) });
    expect(await item(keys.apiKeyShard(key.hash, 9))).toMatchObject({ id: key.id, [`rc${window}`]: 1 });
    // Another instance uses the shard that now exists, and counts on it.
    expect(
      await repository(5000).authenticate(key.hash, window, '2030-01-01T00:00:00.000Z', 9),
    ).toMatchObject({ count: 2 });
    // last_used_at is the latest of the key's items; a rename reaches the shard.
    const listed = (await after.list({ limit: 100, offset: 0 })).data.find((k) => k.id === key.id);
    expect(listed?.last_used_at).toBe('2030-01-01T00:00:00.000Z');
    expect(await after.rename(key, 'renamed')).toBe(true);
    expect(await item(keys.apiKeyShard(key.hash, 9))).toMatchObject({ name: 'renamed' });
    // Revoked by an instance that knows nothing of shards: the shard is refused all the same.
    await before.deleteByHash(key.hash);
    expect(await after.authenticate(key.hash, window, at, 9)).toBeNull();
    expect(await repository(5000).authenticate(key.hash, window, at, 9)).toBeNull();
  });

  it('a token revoked and stored again (the local DEV_API_KEY reused) works on its shards again', async () => {
    const { key } = generateApiKey('local', 'full_access', new Date(T0));
    await repository(10).put(key);
    await repository(1000).authenticate(key.hash, window, at, 2);
    await repository(10).deleteByHash(key.hash);
    const again = { ...key, created_at: new Date(T0 + 60_000).toISOString() };
    await repository(10).put(again);
    expect(await repository(1000).authenticate(key.hash, window, at, 2)).toMatchObject({
      key: { id: key.id },
      count: 1,
    });
  });

  /**
   * A replay of the counting rule with as many function instances as a busy API runs, each its own
   * repository (its own memory) and limiter: the worst case for a window's first writes, as every
   * request is its instance's first of the window. Every UpdateItem is counted, failed ones too
   * (a failed conditional write costs its write unit all the same).
   */
  it.each([400, 1000])(
    'costs at most 1.1 write units a request with %i instances, each request its instance’s first of the window',
    async (instances) => {
      const { key } = generateApiKey('busy', 'full_access', new Date(T0));
      await repository(10).put(key);
      const { counting, writes } = countingUpdates();
      const limit = 2000;
      const limiters = Array.from(
        { length: instances },
        (_, i) =>
          new KeyRateLimiter(
            new DynamoApiKeyRepository(counting, table.tableName, { shards: shardCount(limit) }),
            limit,
            seededRandom(i + 1),
          ),
      );
      // A first request from each instance (its first use reads the key), then a window of one
      // request from every instance, spread over the window.
      await admitAll(limiters, key.hash, T0 - 1000);
      writes.count = 0;
      expect(await admitAll(limiters, key.hash, T0)).toBe(instances);
      expect(writes.count / instances).toBeLessThanOrEqual(1.1);
      // The item keeps a few small counts, not one a window.
      const counts = Object.keys((await item(keys.apiKey(key.hash))) ?? {}).filter((a) => /^rc\d+$/.test(a));
      expect(counts.length).toBeLessThanOrEqual(3);
    },
    60_000,
  );

  /**
   * A key used now and then by a fleet of instances: each request lands on another instance, which
   * saw the item long ago or never, so no write knows the counts the others left. The item must
   * not gather them (past 1 KB a write costs more units, and past 400 KB the key stops working).
   */
  it('keeps a few counts on the item when 1,000 instances serve a key now and then, at about 1 write unit a request', async () => {
    const instances = 1000;
    const { key } = generateApiKey('sparse', 'full_access', new Date(T0));
    await repository(10).put(key);
    const { counting, writes } = countingUpdates();
    const fleet = Array.from(
      { length: instances },
      () => new DynamoApiKeyRepository(counting, table.tableName, { shards: 1 }),
    );
    const random = seededRandom(instances);
    let at = T0;
    let most = 0;
    const requests = 150;
    for (let i = 0; i < requests; i++) {
      at += Math.floor(random() * 20_000);
      const instance = fleet[Math.floor(random() * instances)] as DynamoApiKeyRepository;
      await instance.authenticate(key.hash, Math.floor(at / 1000), new Date(at).toISOString());
      const counts = Object.keys((await item(keys.apiKey(key.hash))) ?? {}).filter((a) => /^rc\d+$/.test(a));
      most = Math.max(most, counts.length);
    }
    expect(most).toBeLessThanOrEqual(5);
    // A second write now and then (a key this quiet costs little either way).
    expect(writes.count / requests).toBeLessThanOrEqual(1.3);
  }, 60_000);
});

/** The table's client, counting the UpdateItem calls made through it (failed ones too: they cost their unit). */
function countingUpdates() {
  const writes = { count: 0 };
  const counting = Object.assign(Object.create(table.db), {
    send: (command: unknown) => {
      if (command instanceof UpdateCommand) writes.count++;
      return table.db.send(command as never);
    },
  }) as DynamoDBDocumentClient;
  return { counting, writes };
}

/** One request from each limiter, `start` plus its share of the second, 50 side by side; how many were accepted. */
async function admitAll(limiters: KeyRateLimiter[], hash: string, start: number): Promise<number> {
  let accepted = 0;
  for (let i = 0; i < limiters.length; i += 50) {
    const outcomes = await Promise.all(
      limiters
        .slice(i, i + 50)
        .map((limiter, j) => limiter.admit(hash, start + Math.floor(((i + j) * 1000) / limiters.length))),
    );
    for (const outcome of outcomes) if ('state' in outcome && outcome.state.allowed) accepted++;
  }
  return accepted;
}
