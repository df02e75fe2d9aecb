import type { PageQuery } from '../shared/list.js';
import type { ApiKey } from './model.js';

export interface ApiKeyRepository {
  findByHash(hash: string): Promise<ApiKey | null>;
  /** Stores a new key (the lookup item by hash and the listing item). */
  put(key: ApiKey): Promise<void>;
  /** Revokes a key: gone from the lookup at once, so its next request is refused. */
  deleteByHash(hash: string): Promise<void>;
  getById(id: string): Promise<ApiKey | null>;
  /** Newest first, with `last_used_at`. */
  list(query: PageQuery): Promise<{ data: ApiKey[]; has_more: boolean }>;
  /** Renames a key (its listing and its lookup); false when it is gone. */
  rename(key: ApiKey, name: string): Promise<boolean>;
  /** Records use, for `last_used_at`; never brings back a revoked key. */
  touch(hash: string, at: string): Promise<void>;
  /**
   * Finds the key with this hash and, in the same write, counts a request against it in `window`
   * (a one-second window number, shared by every function instance) on its rate shard `shard`
   * (0, the key's own item, by default; see api-keys/rate-limit.ts) and records its use at `at`.
   * The key and the shard's count in the window so far, this request included; null when there is
   * no such key (a revoked one is never brought back, on any shard); `throttled` when the store
   * refused the write for the shard's load (the key's traffic, not a fault). `ofConsole`: the
   * request counts on the key's console counter (the same item, a count of its own; see
   * api-keys/console-budget.ts), not on its applications' counter.
   */
  authenticate(
    hash: string,
    window: number,
    at: string,
    shard?: number,
    ofConsole?: boolean,
  ): Promise<KeyCount | 'throttled' | null>;
}

/** A key found by the write that counted a request, and its shard's count in the window. */
export interface KeyCount {
  key: ApiKey;
  count: number;
}
