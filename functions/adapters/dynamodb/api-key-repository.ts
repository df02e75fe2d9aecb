import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { API_KEY_ID_PREFIX, type ApiKey, type Permission } from '../../core/api-keys.js';
import type { PageQuery } from '../../core/list.js';
import type { ApiKeyRepository } from '../../core/ports.js';
import { batchGetAll, isConditionFailure, newestFirstPage } from './client.js';
import { keys } from './table.js';

type Item = Record<string, unknown>;

/** How many one-second windows ahead a key's window may plausibly be (another instance's clock, counted later requests). */
const MAX_WINDOWS_AHEAD = 60;

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
 */
export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private lookupKey(hash: string) {
    return { pk: keys.apiKey(hash), sk: keys.apiKeySk };
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
    // Listed first: a key that works is always listed, so it can always be revoked.
    await this.db.send(
      new PutCommand({ TableName: this.tableName, Item: { ...this.listingKey(key.id), ...rest, hash } }),
    );
    await this.db.send(
      new PutCommand({ TableName: this.tableName, Item: { ...this.lookupKey(hash), ...rest } }),
    );
  }

  async deleteByHash(hash: string): Promise<void> {
    const key = await this.findByHash(hash);
    // The lookup item first: from this moment the token is refused.
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: this.lookupKey(hash) }));
    if (key)
      await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: this.listingKey(key.id) }));
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
    // last_used_at lives on the lookup item, which authentication reads and updates.
    const used = new Map<string, string>();
    if (pageItems.length) {
      const lookups = await batchGetAll(
        this.db,
        this.tableName,
        pageItems.map((item) => this.lookupKey(String(item.hash))),
        'pk, last_used_at',
      );
      for (const item of lookups) if (item.last_used_at) used.set(String(item.pk), String(item.last_used_at));
    }
    return {
      data: pageItems.map((item) => {
        const key = toKey(item, String(item.hash));
        const lastUsed = used.get(keys.apiKey(key.hash));
        return lastUsed ? { ...key, last_used_at: lastUsed } : key;
      }),
      has_more,
    };
  }

  async rename(key: ApiKey, name: string): Promise<boolean> {
    const rename = (Key: Record<string, string>) =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET #name = :name',
          // Never brings back a key revoked meanwhile.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': name },
        }),
      );
    try {
      await rename(this.listingKey(key.id));
      await rename(this.lookupKey(key.hash));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** The window in which this instance last counted each key (which write to try first). */
  private readonly lastWindow = new Map<string, number>();

  /**
   * One UpdateItem, returning the key: DynamoDB cannot reset a count in the same expression that
   * adds to it, so a request either adds one to its window's count (`rw` is this window or a later
   * one: another instance's clock a little ahead, or this request's window read a moment before
   * others were counted) or starts the window (`rw` is older, absent, or implausibly far ahead: a
   * clock more than a minute off must not lock a key out). Whichever this instance expects is tried
   * first, the other when its condition fails (another instance started the window meanwhile, or
   * counted since), then the first once more. When none holds (windows moving under heavy
   * contention), a consistent read tells whether the key is gone: if not, the request goes through
   * uncounted rather than being refused for a key that works. A revoked key is never brought back
   * (each write is conditional on the item existing).
   *
   * A key this instance has not counted yet is first read (one eventually consistent GetItem, half
   * a read unit): a token that names no key then costs that read, as it always did, not two failed
   * writes. So a key in use costs one write a request (1 write unit: its item is under 1 KB), and
   * one read more the first time each function instance sees it.
   */
  async authenticate(
    hash: string,
    window: number,
    at: string,
  ): Promise<{ key: ApiKey; count: number } | null> {
    if (!this.lastWindow.has(hash) && !(await this.findByHash(hash))) return null;
    const write = async (update: string, condition: string) => {
      try {
        const { Attributes } = await this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: this.lookupKey(hash),
            UpdateExpression: update,
            ConditionExpression: `attribute_exists(pk) AND ${condition}`,
            ExpressionAttributeValues: {
              ':one': 1,
              ':w': window,
              ':far': window + MAX_WINDOWS_AHEAD,
              ':at': at,
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return Attributes ?? null;
      } catch (error) {
        if (isConditionFailure(error)) return null;
        throw error;
      }
    };
    const add = () => write('SET rc = rc + :one, last_used_at = :at', 'rw BETWEEN :w AND :far');
    const start = () =>
      write(
        'SET rw = :w, rc = :one, last_used_at = :at',
        '(attribute_not_exists(rw) OR rw < :w OR rw > :far)',
      );
    const attempts = this.lastWindow.get(hash) === window ? [add, start, add] : [start, add, start];
    for (const attempt of attempts) {
      const item = await attempt();
      if (!item) continue;
      if (this.lastWindow.size >= 10_000) this.lastWindow.clear();
      this.lastWindow.set(hash, window);
      return { key: toKey(item, hash), count: Number(item.rc) };
    }
    this.lastWindow.delete(hash);
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.lookupKey(hash), ConsistentRead: true }),
    );
    return Item ? { key: toKey(Item, hash), count: 0 } : null;
  }

  async touch(hash: string, at: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.lookupKey(hash),
          UpdateExpression: 'SET last_used_at = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
