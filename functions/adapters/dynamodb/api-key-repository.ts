import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { API_KEY_ID_PREFIX, type ApiKey, type Permission } from '../../api-keys/model.js';
import type { ApiKeyRepository } from '../../api-keys/ports.js';
import type { PageQuery } from '../../shared/list.js';
import { attributesIf, batchGetAll, isThrottling, newestFirstPage, writeIf } from './client.js';
import { keys, TTL_ATTRIBUTE } from './table.js';

type Item = Record<string, unknown>;
type DocumentClient = DynamoDBDocumentClient;

/** How many one-second windows ahead another instance's window may plausibly be (its clock a little ahead). */
const MAX_WINDOWS_AHEAD = 60;

/**
 * The attribute that counts a key shard's requests in one window: `rc<window>` for its
 * applications, `cc<window>` for its console (a budget of its own on the same item).
 */
const countAttribute = (window: number, ofConsole?: boolean) => (ofConsole ? 'cc' : 'rc') + window;
const COUNT_ATTRIBUTE = /^[rc]c\d+$/;

/**
 * The counts on a rate shard's item that no request needs any more, oldest first: those older
 * than the last window's, and those more than MAX_WINDOWS_AHEAD ahead; and the window and count of
 * the design before (`rw`, `rc`). At most MAX_REMOVED_A_WRITE (an expression stays small).
 */
const staleCounts = (item: Item, window: number): string[] =>
  Object.keys(item)
    .filter((attribute) => {
      if (attribute === 'rw' || attribute === 'rc') return true;
      if (!COUNT_ATTRIBUTE.test(attribute)) return false;
      const counted = Number(attribute.slice(2));
      return counted < window - 1 || counted > window + MAX_WINDOWS_AHEAD;
    })
    .sort((a, b) => (Number(a.slice(2)) || 0) - (Number(b.slice(2)) || 0))
    .slice(0, MAX_REMOVED_A_WRITE);

/** Most counts one write removes. */
const MAX_REMOVED_A_WRITE = 50;

/**
 * Stale counts an answer may show before the write that got it removes them at once (a second
 * UpdateItem): a key used now and then by many instances (each of which removes only what it saw
 * on its own last write) would otherwise gather a count a request, past 1 KB (more write units a
 * request) and on without end. A key in steady use never has that many (each write removes the
 * counts two and three windows back), so it pays no second write.
 */
const MOST_STALE_KEPT = 3;

/** How long a revoked key's rate shards are kept as tombstones (TTL): far longer than any request in flight. */
const TOMBSTONE_SECONDS = 7 * 24 * 3600;

/** What authentication reads of a key, copied onto each of its rate shards. */
const AUTH_ATTRIBUTES = ['id', 'name', 'permission', 'created_at', 'domain_id', 'domain'] as const;
const authPart = (item: Item): Item =>
  Object.fromEntries(
    AUTH_ATTRIBUTES.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]),
  );

/** The rate shards beyond the key's own item that exist (`rs` on the key's item, a number set). */
const shardsOf = (item: Item | undefined): number[] =>
  item?.rs instanceof Set ? [...(item.rs as Set<number>)].map(Number) : [];

const toKey = (item: Item, hash: string): ApiKey => {
  const key: ApiKey = {
    id: String(item.id),
    name: String(item.name),
    permission: item.permission as Permission,
    hash,
    created_at: String(item.created_at),
  };
  if (item.domain_id) Object.assign(key, { domain_id: String(item.domain_id), domain: String(item.domain) });
  if (item.last_used_at) key.last_used_at = String(item.last_used_at);
  return key;
};

/**
 * API keys: a lookup item keyed by the SHA-256 of the token (what authentication reads; the token
 * itself is never stored) and a listing item in the `APIKEYS` partition (what GET /v1/api-keys
 * reads), which holds the hash so a key can be revoked by id.
 *
 * A key whose rate limit needs more than one rate shard (api-keys/rate-limit.ts) has shard items
 * `APIKEY#<sha256>#<k>` beside its lookup item (shard 0), each with a copy of what authentication
 * reads and its own window and count; the lookup item lists the ones that exist (`rs`). They are
 * written when the key is created (`shards` of them) and, for a key created when the limit needed
 * fewer, on their first use: the shard is first added to `rs` on the lookup item (conditional on the
 * key existing), then put if absent. Revoking deletes the lookup item, whose last state names every
 * shard ever added, and overwrites each of those with a tombstone (`revoked`, for a week): a shard
 * put by a first use racing the revocation is either named in `rs` (and overwritten) or refused
 * (the key is gone), so no shard of a revoked key ever answers.
 */
export class DynamoApiKeyRepository implements ApiKeyRepository {
  /** Rate shards written when a key is created (the rest are created on first use). */
  private readonly shards: number;
  /** The client of the rate writes: no retries of a throttled write (see aws-clients.ts). */
  private readonly rateDb: DocumentClient;

  constructor(
    private readonly db: DocumentClient,
    private readonly tableName: string,
    options: { shards?: number; rateDb?: DocumentClient } = {},
  ) {
    this.shards = options.shards ?? 1;
    this.rateDb = options.rateDb ?? db;
  }

  private lookupKey(hash: string) {
    return { pk: keys.apiKey(hash), sk: keys.apiKeySk };
  }

  /** Rate shard `shard` of a key: 0 is its lookup item. */
  private shardKey(hash: string, shard: number) {
    return shard === 0 ? this.lookupKey(hash) : { pk: keys.apiKeyShard(hash, shard), sk: keys.apiKeySk };
  }

  private listingKey(id: string) {
    return { pk: keys.apiKeys, sk: keys.apiKeyListing(id) };
  }

  async findByHash(hash: string): Promise<ApiKey | null> {
    // Strongly consistent: a key used right after it was created is found (read once per function
    // instance), and one revoked is not.
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.lookupKey(hash), ConsistentRead: true }),
    );
    return Item ? toKey(Item, hash) : null;
  }

  async put(key: ApiKey): Promise<void> {
    const { hash, last_used_at: _, ...rest } = key;
    const shards = Array.from({ length: this.shards - 1 }, (_, i) => i + 1);
    // Listed first: a key that works is always listed, so it can always be revoked.
    await this.db.send(
      new PutCommand({ TableName: this.tableName, Item: { ...this.listingKey(key.id), ...rest, hash } }),
    );
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...this.lookupKey(hash), ...rest, ...(shards.length ? { rs: new Set(shards) } : {}) },
      }),
    );
    // Over any tombstone of an earlier key with the same token (a reused local DEV_API_KEY).
    await Promise.all(
      shards.map((shard) =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...this.shardKey(hash, shard), ...authPart(rest) },
          }),
        ),
      ),
    );
  }

  async deleteByHash(hash: string): Promise<void> {
    // The lookup item first: from this moment the key is refused on it, and cannot gain shards.
    const { Attributes: old } = await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: this.lookupKey(hash), ReturnValues: 'ALL_OLD' }),
    );
    const expires = Math.floor(Date.now() / 1000) + TOMBSTONE_SECONDS;
    await Promise.all(
      shardsOf(old).map((shard) =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              ...this.shardKey(hash, shard),
              revoked: true,
              created_at: old?.created_at,
              [TTL_ATTRIBUTE]: expires,
            },
          }),
        ),
      ),
    );
    if (old?.id)
      await this.db.send(
        new DeleteCommand({ TableName: this.tableName, Key: this.listingKey(String(old.id)) }),
      );
  }

  async getById(id: string): Promise<ApiKey | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.listingKey(id), ConsistentRead: true }),
    );
    return Item ? toKey(Item, String(Item.hash)) : null;
  }

  async list(query: PageQuery) {
    const { items: pageItems, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.apiKeys,
        prefix: `${keys.apiKeyListingPrefix}${API_KEY_ID_PREFIX}_`,
        sortKeyOf: keys.apiKeyListing,
      },
      query,
    );
    // last_used_at lives on the lookup item and the rate shards, which authentication updates: the
    // latest of them (ISO times sort as text).
    const used = new Map<string, string>();
    const note = (pk: string, at: unknown) => {
      const hash = pk.slice(keys.apiKey('').length).split('#')[0] as string;
      if (typeof at === 'string' && at > (used.get(hash) ?? '')) used.set(hash, at);
    };
    if (pageItems.length) {
      const lookups = await batchGetAll(
        this.db,
        this.tableName,
        pageItems.map((item) => this.lookupKey(String(item.hash))),
        'pk, last_used_at, rs',
      );
      for (const item of lookups) note(String(item.pk), item.last_used_at);
      const shardKeys = lookups.flatMap((item) =>
        shardsOf(item).map((shard) => ({ pk: `${String(item.pk)}#${shard}`, sk: keys.apiKeySk })),
      );
      if (shardKeys.length)
        for (const item of await batchGetAll(this.db, this.tableName, shardKeys, 'pk, last_used_at'))
          note(String(item.pk), item.last_used_at);
    }
    return {
      data: pageItems.map((item) => {
        const key = toKey(item, String(item.hash));
        const lastUsed = used.get(key.hash);
        return lastUsed ? { ...key, last_used_at: lastUsed } : key;
      }),
      has_more,
    };
  }

  async rename(key: ApiKey, name: string): Promise<boolean> {
    const rename = (Key: Record<string, string>, condition = 'attribute_exists(pk)') =>
      attributesIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET #name = :name',
          // Never brings back a key revoked meanwhile.
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': name },
          ReturnValues: 'ALL_NEW',
        }),
      );
    if (!(await rename(this.listingKey(key.id)))) return false;
    const lookup = await rename(this.lookupKey(key.hash));
    if (!lookup) return false;
    // A shard not put yet takes the name from the lookup item when it is.
    await Promise.all(
      shardsOf(lookup).map((shard) =>
        rename(this.shardKey(key.hash, shard), 'attribute_exists(pk) AND attribute_not_exists(revoked)'),
      ),
    );
    return true;
  }

  /**
   * The key shards this instance has counted on (by `<hash>#<shard>`), each with the count
   * attributes it saw left behind on the item (removed by its next write there).
   */
  private readonly counted = new Map<string, string[]>();

  /**
   * One UpdateItem on the key's rate shard, returning the key and its count in this window. Each
   * one-second window counts in an attribute of its own (`rc<window>`), so the write is the same
   * whichever instance comes first in a window: `ADD rc<window> :one`, no condition on the window,
   * never a failed write (a design that started the window with one conditional write and added
   * to it with another made every instance's first request of each window fail one of them once
   * another had started it: about 1.8 write units a request with hundreds of instances; this is
   * one). The same write removes the counts of two and three windows back (the last window's
   * stays, for an instance whose clock is a little behind), and any other count this instance saw
   * on the item in its last answer that is older still or implausibly far ahead (a late write, a
   * clock more than a minute off); an answer that still shows more than MOST_STALE_KEPT stale
   * counts (a key used now and then by many instances, each seeing the item seldom) has them
   * removed at once by a second write. So the item keeps a few small counts and stays under 1 KB
   * (one write unit). A clock far ahead counts in its own window and locks no key out; a
   * request late past its window's end counts in its own window, as a new count.
   *
   * A revoked key is never brought back: the write is conditional on the item existing and not
   * being a tombstone. When that condition fails, a consistent read tells whether the key is gone;
   * if not (the item was being replaced), the request goes through uncounted rather than being
   * refused for a key that works.
   *
   * A shard this instance has not counted on yet is first read (one eventually consistent GetItem,
   * half a read unit): a token that names no key then costs that read, as it always did, not a
   * failed write; a shard that does not exist yet is created then. So a key in use costs one write
   * a request (1 write unit), and one read more the first time each function instance uses each of
   * its shards.
   *
   * These writes go through the rate client, which does not retry throttling: a shard taking more
   * writes than DynamoDB allows answers `throttled` at once (the caller refuses with 429).
   */
  async authenticate(
    hash: string,
    window: number,
    at: string,
    shard = 0,
    ofConsole?: boolean,
  ): Promise<{ key: ApiKey; count: number } | 'throttled' | null> {
    try {
      return await this.count(hash, window, at, shard, ofConsole);
    } catch (error) {
      if (isThrottling(error)) return 'throttled';
      throw error;
    }
  }

  private async count(hash: string, window: number, at: string, shard: number, ofConsole?: boolean) {
    const seen = `${hash}#${shard}`;
    const Key = this.shardKey(hash, shard);
    const stale = this.counted.get(seen);
    if (!stale) {
      if (shard === 0) {
        if (!(await this.findByHash(hash))) return null;
      } else {
        const { Item } = await this.rateDb.send(new GetCommand({ TableName: this.tableName, Key }));
        if (!Item || Item.revoked) if (!(await this.addShard(hash, shard))) return null;
      }
    }
    const name = countAttribute(window, ofConsole);
    const removed = [
      ...new Set([
        countAttribute(window - 2, ofConsole),
        countAttribute(window - 3, ofConsole),
        ...(stale ?? []),
      ]),
    ].filter((attribute) => attribute !== name);
    const names = Object.fromEntries(removed.map((attribute, i) => [`#r${i}`, attribute]));
    const item = await attributesIf(
      this.rateDb,
      new UpdateCommand({
        TableName: this.tableName,
        Key,
        UpdateExpression: `SET last_used_at = :at ADD #c :one REMOVE ${Object.keys(names).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revoked)',
        ExpressionAttributeNames: { '#c': name, ...names },
        ExpressionAttributeValues: { ':one': 1, ':at': at },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (item) {
      if (this.counted.size >= 10_000) this.counted.clear();
      const left = staleCounts(item, window);
      if (left.length > MOST_STALE_KEPT) await this.removeCounts(Key, left);
      this.counted.set(seen, left.length > MOST_STALE_KEPT ? [] : left);
      return { key: toKey(item, hash), count: Number(item[name]) };
    }
    this.counted.delete(seen);
    const { Item } = await this.rateDb.send(
      new GetCommand({ TableName: this.tableName, Key, ConsistentRead: true }),
    );
    return Item && !Item.revoked ? { key: toKey(Item, hash), count: 0 } : null;
  }

  /** Takes stale counts off a rate shard's item; a failure costs only a larger item until the next try. */
  private async removeCounts(Key: Item, stale: string[]): Promise<void> {
    const names = Object.fromEntries(stale.map((attribute, i) => [`#r${i}`, attribute]));
    await writeIf(
      this.rateDb,
      new UpdateCommand({
        TableName: this.tableName,
        Key,
        UpdateExpression: `REMOVE ${Object.keys(names).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
      }),
    ).catch(() => undefined);
  }

  /**
   * Creates a rate shard of a key created when its limit needed fewer: named on the lookup item
   * first (so a revocation sees it), then put unless it exists. False when the key is gone.
   */
  private async addShard(hash: string, shard: number): Promise<boolean> {
    const key = await attributesIf(
      this.rateDb,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.lookupKey(hash),
        UpdateExpression: 'ADD rs :shard',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':shard': new Set([shard]) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (!key) return false;
    // An UpdateItem that creates the item (the grant every API function has), not a PutItem.
    const part = authPart(key);
    const names = Object.keys(part);
    await writeIf(
      this.rateDb,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.shardKey(hash, shard),
        UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :a${i}`).join(', ')} REMOVE revoked, ${TTL_ATTRIBUTE}`,
        // Never over a live shard (its count), nor over this key's own tombstone (a revocation
        // that came in between); over an earlier key's tombstone with the same token, yes.
        ConditionExpression:
          'attribute_not_exists(pk) OR (attribute_exists(revoked) AND created_at <> :created)',
        ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#a${i}`, name])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(names.map((name, i) => [`:a${i}`, part[name]])),
          ':created': key.created_at,
        },
      }),
    );
    return true;
  }

  async touch(hash: string, at: string): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.lookupKey(hash),
        UpdateExpression: 'SET last_used_at = :at',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': at },
      }),
    );
  }
}
