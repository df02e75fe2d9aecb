import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants, inflateRawSync } from 'node:zlib';
import type { RequestLogEntry } from '../../request-logs/model.js';
import { logTimeOf, statusClassOf } from '../../request-logs/model.js';
import { INDEXES, keys, LOG_SHARDS, shardOf, TTL_ATTRIBUTE } from './table.js';

/*
 * How request logs are kept as items (request-log-repository.ts reads and writes them). A write
 * unit is 1 KB of an item, rounded up per item, and every index entry is one more; so a log is one
 * compact item of at most 1 KB where it can be, and no index entry unless it is an error:
 *
 * - Each log is an item in one of LOG_SHARDS listing partitions of the table itself
 *   (`pk = LOGS#nn`, the shard a hash of its id; `sk = LOG#<id>`, a UUIDv7, so the partition sorts
 *   by time): the list reads the table, and no listing index entry is written. A log whose status
 *   is not 2xx also has an entry in the status index (`LOGS#<class>#nn`), for `?status=4xx`; a
 *   list of 2xx reads the table and leaves the others out (they are the few).
 * - Its summary under short attribute names (an item's size counts its names); `created_at` is
 *   the id's own time.
 * - Bodies are kept apart from their own log: the bodies of a group of up to GROUP logs written
 *   together (one writer batch) are compressed together (brotli: requests alike compress far
 *   better together, a receipt's 6.5 KB body to about 0.4 KB among ten), and the compressed bytes
 *   are cut into slices laid in the spare room of the group's items (up to 1 KB each), the first
 *   items first. Each item names the items holding its group's slices, the group's tag (a hash of
 *   its ids) and its place in the group; reading a log's bodies reads those items.
 */

/** Attribute names of a log item. */
export const LOG_ATTRIBUTES = {
  method: 'm',
  endpoint: 'e',
  status: 's',
  userAgent: 'u',
  apiKeyId: 'k',
  durationMs: 'd',
  /** Only when it is not the id's own time (a log written by other means than the middleware). */
  createdAt: 'c',
  /** The ids of the items holding the group's slices, in order, 16 bytes each (omitted: this item alone). */
  holders: 'bh',
  /** The group's tag: a slice from another group (a line written again in another batch) is told. */
  tag: 'bc',
  /** This log's place in its group's bodies. */
  index: 'bi',
  /** A slice of the group's compressed bodies (binary). */
  slice: 'z',
} as const;
const A = LOG_ATTRIBUTES;

/** Logs whose bodies are compressed together (at most 25 in a BatchWriteItem: two groups a call). */
export const LOG_GROUP = 12;
/** An item's size up to which a write is one unit. */
const UNIT = 1024;

type Item = Record<string, unknown>;

const GROUP_BROTLI = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};

/** DynamoDB's size of an attribute value (names and UTF-8 strings, binary, numbers about 1 byte per 2 digits). */
function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace('.', '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.byteLength;
  return 1;
}
export const itemSize = (item: Item) =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);

/** A log's time, from its UUIDv7 id. */
export const createdAtOf = logTimeOf;

const DAY_SECONDS = 86_400;

/** A log's item without its bodies: keys, summary, TTL, and the status index entry of an error. */
function summaryItem(entry: RequestLogEntry, retentionDays: number): Item {
  const shard = shardOf(entry.id, LOG_SHARDS);
  const statusClass = statusClassOf(entry.response_status);
  const item: Item = {
    pk: keys.logs(shard),
    sk: keys.logListed(entry.id),
    [A.method]: entry.method,
    [A.endpoint]: entry.endpoint,
    [A.status]: entry.response_status,
    [A.durationMs]: entry.duration_ms,
    [TTL_ATTRIBUTE]: Math.floor(Date.parse(entry.created_at) / 1000) + retentionDays * DAY_SECONDS,
  };
  if (entry.created_at !== createdAtOf(entry.id)) item[A.createdAt] = entry.created_at;
  if (entry.user_agent !== null) item[A.userAgent] = entry.user_agent;
  if (entry.api_key_id !== null) item[A.apiKeyId] = entry.api_key_id;
  if (statusClass !== '2xx') {
    item[INDEXES.emailsByStatus.partitionKey] = keys.logsWithStatus(statusClass, shard);
    item[INDEXES.emailsByStatus.sortKey] = keys.logListed(entry.id);
  }
  return item;
}

/**
 * The items of one group of logs (at most LOG_GROUP, ids unique): each its summary, and the group's
 * bodies compressed together and cut into slices over the first items, each filled up to 1 KB
 * (what is left over goes to the last holder, so at most one item is past a unit). A group without
 * a body (requestLogBodies=false) is its summaries alone: an item with no tag reads as a log without
 * bodies, from itself (bodiesPlace, bodiesFrom).
 */
export function groupItems(entries: readonly RequestLogEntry[], retentionDays: number): Item[] {
  const items = entries.map((entry) => summaryItem(entry, retentionDays));
  if (entries.every((entry) => entry.request_body === null && entry.response_body === null)) return items;
  const ids = entries.map((entry) => entry.id);
  const packed = brotliCompressSync(
    JSON.stringify(entries.map((entry) => [entry.request_body, entry.response_body])),
    GROUP_BROTLI,
  );
  const tag = createHash('sha256').update(ids.join(',')).digest('hex').slice(0, 8);
  items.forEach((item, i) => {
    item[A.tag] = tag;
    item[A.index] = i;
  });
  // The fewest holders whose spare room takes the bytes (the holders' ids are in every item).
  let holders = 1;
  const roomOf = (item: Item, holderIds: Uint8Array | undefined) =>
    Math.max(
      0,
      UNIT - itemSize(item) - (holderIds ? A.holders.length + holderIds.length : 0) - A.slice.length,
    );
  const holderIdsOf = (k: number) =>
    k === 1 && entries.length === 1 ? undefined : Buffer.concat(ids.slice(0, k).map(idBytes));
  for (; holders < items.length; holders++) {
    const list = holderIdsOf(holders);
    const room = items.slice(0, holders).reduce((sum, item) => sum + roomOf(item, list), 0);
    if (room >= packed.length) break;
  }
  const list = holderIdsOf(holders);
  let offset = 0;
  for (let i = 0; i < holders; i++) {
    const item = items[i] as Item;
    const size =
      i === holders - 1 ? packed.length - offset : Math.min(roomOf(item, list), packed.length - offset);
    item[A.slice] = packed.subarray(offset, offset + size);
    offset += size;
  }
  if (list) for (const item of items) item[A.holders] = list;
  return items;
}

const idBytes = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex');
const idOf = (bytes: Uint8Array) => {
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** Where a log's bodies are: the holders' ids in order, its group's tag, its place. */
export function bodiesPlace(item: Item): { holders: string[]; tag: string; index: number } {
  const id = String(item.sk).slice(keys.logListedPrefix.length);
  const list = item[A.holders];
  const holders: string[] = [];
  if (list instanceof Uint8Array)
    for (let i = 0; i + 16 <= list.length; i += 16) holders.push(idOf(list.subarray(i, i + 16)));
  return {
    holders: holders.length ? holders : [id],
    tag: String(item[A.tag]),
    index: Number(item[A.index]),
  };
}

/**
 * A log's bodies from its group's holders (in order), or nulls when a holder is missing or holds
 * another group's slice (the line written again in another batch).
 */
export function bodiesFrom(
  place: { tag: string; index: number },
  holders: (Item | undefined)[],
): [string | null, string | null] {
  if (holders.some((holder) => holder?.[A.tag] !== place.tag || !(holder[A.slice] instanceof Uint8Array)))
    return [null, null];
  const packed = Buffer.concat(holders.map((holder) => holder?.[A.slice] as Uint8Array));
  const bodies = JSON.parse(brotliDecompressSync(packed).toString('utf8')) as [
    string | null,
    string | null,
  ][];
  return bodies[place.index] ?? [null, null];
}

/** A log's entry from its item (its bodies apart: bodiesFrom). */
export function summaryOf(item: Item): RequestLogEntry {
  const id = String(item.sk).slice(keys.logListedPrefix.length);
  return {
    id,
    created_at: (item[A.createdAt] as string | undefined) ?? createdAtOf(id),
    method: String(item[A.method]),
    endpoint: String(item[A.endpoint]),
    response_status: Number(item[A.status]),
    user_agent: (item[A.userAgent] as string | undefined) ?? null,
    api_key_id: (item[A.apiKeyId] as string | undefined) ?? null,
    duration_ms: Number(item[A.durationMs]),
    request_body: null,
    response_body: null,
  };
}

// The layout before this one: each log its own partition `LOG#<id>`, listed through both listing
// indexes, bodies over 1 KB deflated. Such logs are read until their TTL takes them.

export const isLegacyItem = (item: Item) => item.sk === keys.logSk;

const inflated = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : typeof value === 'string'
      ? value
      : inflateRawSync(value as Uint8Array).toString('utf8');

export const legacyEntryOf = (item: Item): RequestLogEntry => ({
  id: String(item.id),
  created_at: String(item.created_at),
  method: String(item.method),
  endpoint: String(item.endpoint),
  response_status: Number(item.response_status),
  user_agent: (item.user_agent as string | null | undefined) ?? null,
  api_key_id: (item.api_key_id as string | null | undefined) ?? null,
  duration_ms: Number(item.duration_ms),
  request_body: inflated(item.request_body),
  response_body: inflated(item.response_body),
});
