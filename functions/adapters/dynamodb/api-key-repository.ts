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

/** How many one-second windows ahead a key's window may plausibly be (another instance's clock, counted later requests). */
const MAX_WINDOWS_AHEAD = 60;

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

  /** The window in which this instance last counted each key's shard (which write to try first), by `<hash>#<shard>`. */
  private readonly lastWindow = new Map<string, number>();

  /**
   * One UpdateItem on the key's rate shard, returning the key: DynamoDB cannot reset a count in the
   * same expression that adds to it, so a request either adds one to its window's count (`rw` is
   * this window or a later one: another instance's clock a little ahead, or this request's window
   * read a moment before others were counted) or starts the window (`rw` is older, absent, or
   * implausibly far ahead: a clock more than a minute off must not lock a key out). Whichever this
   * instance expects is tried first, the other when its condition fails (another instance started
   * the window meanwhile, or counted since), then the first once more. When none holds (windows
   * moving under heavy contention), a consistent read tells whether the key is gone: if not, the
   * request goes through uncounted rather than being refused for a key that works. A revoked key is
   * never brought back (each write is conditional on the item existing and not being a tombstone).
   *
   * A shard this instance has not counted on yet is first read (one eventually consistent GetItem,
   * half a read unit): a token that names no key then costs that read, as it always did, not two
   * failed writes; a shard that does not exist yet is created then. So a key in use costs one write
   * a request (1 write unit: its items are under 1 KB), and one read more the first time each
   * function instance uses each of its shards.
   *
   * These writes go through the rate client, which does not retry throttling: a shard taking more
   * writes than DynamoDB allows answers `throttled` at once (the caller refuses with 429).
   */
  async authenticate(
    hash: string,
    window: number,
    at: string,
    shard = 0,
  ): Promise<{ key: ApiKey; count: number } | 'throttled' | null> {
    try {
      return await this.count(hash, window, at, shard);
    } catch (error) {
      if (isThrottling(error)) return 'throttled';
      throw error;
    }
  }

  private async count(hash: string, window: number, at: string, shard: number) {
    const seen = `${hash}#${shard}`;
    const Key = this.shardKey(hash, shard);
    if (!this.lastWindow.has(seen)) {
      if (shard === 0) {
        if (!(await this.findByHash(hash))) return null;
      } else {
        const { Item } = await this.rateDb.send(new GetCommand({ TableName: this.tableName, Key }));
        if (!Item || Item.revoked) if (!(await this.addShard(hash, shard))) return null;
      }
    }
    const write = (update: string, condition: string) =>
      attributesIf(
        this.rateDb,
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(revoked) AND ${condition}`,
          ExpressionAttributeValues: {
            ':one': 1,
            ':w': window,
            ':far': window + MAX_WINDOWS_AHEAD,
            ':at': at,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
    const add = () => write('SET rc = rc + :one, last_used_at = :at', 'rw BETWEEN :w AND :far');
    const start = () =>
      write(
        'SET rw = :w, rc = :one, last_used_at = :at',
        '(attribute_not_exists(rw) OR rw < :w OR rw > :far)',
      );
    const attempts = this.lastWindow.get(seen) === window ? [add, start, add] : [start, add, start];
    for (const attempt of attempts) {
      const item = await attempt();
      if (!item) continue;
      if (this.lastWindow.size >= 10_000) this.lastWindow.clear();
      this.lastWindow.set(seen, window);
      return { key: toKey(item, hash), count: Number(item.rc) };
    }
    this.lastWindow.delete(seen);
    const { Item } = await this.rateDb.send(
      new GetCommand({ TableName: this.tableName, Key, ConsistentRead: true }),
    );
    return Item && !Item.revoked ? { key: toKey(Item, hash), count: 0 } : null;
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
