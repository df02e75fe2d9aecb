import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LAYOUT, EmailKeys, parseLayout } from '../../functions/adapters/dynamodb/email-keys.js';
import { shardOf } from '../../functions/adapters/dynamodb/table.js';
import { newEmailId } from '../../functions/shared/ids.js';
import {
  chunkOf,
  type MergeOrder,
  mergeSorted,
  readBound,
  type SortedSource,
} from '../../functions/shared/sorted-merge.js';

/** A source over a sorted array that may answer with fewer entries than asked (DynamoDB's 1 MB pages). */
function arraySource(entries: string[], short = 0): SortedSource<string> & { reads: number } {
  let at = 0;
  const source = {
    reads: 0,
    async read(count: number) {
      source.reads++;
      const n = Math.max(1, count - short);
      const page = entries.slice(at, at + n);
      at += page.length;
      return { entries: page, done: at >= entries.length };
    },
  };
  return source;
}

const merge = (shards: string[][], wanted: number, order: MergeOrder, short = 0) => {
  const sorted = shards.map((s) =>
    [...s].sort((a, b) => (order === 'ascending' ? (a < b ? -1 : 1) : a < b ? 1 : -1)),
  );
  return mergeSorted(
    sorted.map((s) => arraySource(s, short)),
    (e) => e,
    wanted,
    order,
  );
};

describe('merging sorted shards', () => {
  it('gives the first entries of the union, in order, for any spread over any number of shards', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 130 }),
        fc.constantFrom<MergeOrder>('ascending', 'descending'),
        fc.integer({ min: 0, max: 1_000_000 }),
        async (all, shardCount, wanted, order, seed) => {
          // Uneven: each entry goes to a shard by a hash of it and the seed; some shards stay empty.
          const shards: string[][] = Array.from({ length: shardCount }, () => []);
          for (const [i, entry] of all.entries())
            shards[(i * 7919 + seed) % shardCount === 0 ? 0 : (seed + i * i) % shardCount]?.push(entry);
          const { entries, read } = await merge(shards, wanted, order);
          const expected = [...all].sort((a, b) =>
            order === 'ascending' ? (a < b ? -1 : 1) : a < b ? 1 : -1,
          );
          expect(entries).toEqual(expected.slice(0, wanted));
          expect(read).toBeLessThanOrEqual(readBound(wanted, shardCount));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds its read bound: 2 × the page and 3 per shard at most, however the page falls', async () => {
    // Every entry of the page in one shard: that shard is read on chunk by chunk, the others once.
    const hot = Array.from({ length: 200 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    const shards = [hot, ...Array.from({ length: 31 }, (_, s) => [`a${s}`])];
    const { entries, read } = await merge(shards, 101, 'descending');
    expect(entries).toEqual([...hot].reverse().slice(0, 101));
    expect(read).toBeLessThanOrEqual(readBound(101, 32));
    expect(readBound(101, 32)).toBeLessThanOrEqual(2 * 101 + 3 * 32);
    expect(chunkOf(21, 33)).toBe(3);
    expect(chunkOf(100_000, 2)).toBe(1000);
  });

  it('reads a short source on until the page is whole, and stops at empty ones', async () => {
    const { entries } = await merge([['c', 'a'], [], ['d', 'b', 'e']], 5, 'ascending', 2);
    expect(entries).toEqual(['a', 'b', 'c', 'd', 'e']);
    const none = await merge([[], []], 3, 'ascending');
    expect(none).toEqual({ entries: [], read: 0 });
  });

  it('asks no shard for more once the page is whole', async () => {
    const sources = [arraySource(['a', 'b', 'c', 'd', 'e', 'f']), arraySource(['g', 'h'])];
    await mergeSorted(sources, (e) => e, 2, 'ascending');
    expect(sources.map((s) => s.reads)).toEqual([1, 1]);
  });
});

describe('email shards and expiry', () => {
  it('spreads ids evenly: no shard of 32 takes more than 1.5 × its share of 32,000 emails', () => {
    const counts = new Array(32).fill(0);
    for (let i = 0; i < 32_000; i++) counts[shardOf(newEmailId(), 32)]++;
    expect(Math.max(...counts)).toBeLessThan(1.5 * 1000);
    expect(Math.min(...counts)).toBeGreaterThan(0.5 * 1000);
  });

  it('puts an email in the same shard of every index, and reads the unsharded partitions of earlier tables too', () => {
    const emailKeys = new EmailKeys({ ...DEFAULT_LAYOUT, shards: 8 });
    const id = newEmailId();
    const shard = String(shardOf(id, 8)).padStart(2, '0');
    expect(emailKeys.created(id, '2026-12-01T00:00:00.000Z')).toEqual({
      gsi1pk: `EMAILS#${shard}`,
      gsi1sk: id,
      gsi2pk: `EMAILS#queued#${shard}`,
      gsi2sk: id,
      gsi3pk: `DUE#${shard}`,
      gsi3sk: `2026-12-01T00:00:00.000Z#${id}`,
    });
    expect(emailKeys.withStatus(id, 'delivered')).toBe(`EMAILS#delivered#${shard}`);
    expect(emailKeys.timePartitions()).toHaveLength(9);
    expect(emailKeys.timePartitions().at(-1)).toBe('EMAILS');
    expect(emailKeys.statusPartitions('queued').at(-1)).toBe('EMAILS#queued');
    expect(emailKeys.duePartitions().at(-1)).toBe('DUE');
  });

  it('expires an email its retention after it was created, or after its time when scheduled later', () => {
    const emailKeys = new EmailKeys({ ...DEFAULT_LAYOUT, retentionDays: 30 });
    const created = '2026-11-25T00:00:00.000Z';
    const day = 86_400;
    const at = Date.parse(created) / 1000;
    expect(emailKeys.expiry(created)).toEqual({ expires_at: at + 30 * day });
    expect(emailKeys.expiry(created, '2026-12-25T00:00:00.000Z')).toEqual({ expires_at: at + 60 * day });
    expect(emailKeys.eventExpiry('2026-11-26T00:00:00.000Z')).toEqual({ expires_at: at + 31 * day });
    expect(new EmailKeys({ ...DEFAULT_LAYOUT, retentionDays: 0 }).expiry(created)).toEqual({});
  });

  it('reads its layout from the stack, and refuses one that cannot be', () => {
    expect(parseLayout(undefined)).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout('{"shards":64}')).toEqual({ ...DEFAULT_LAYOUT, shards: 64 });
    expect(() => parseLayout('{"shards":0}')).toThrow(/listingShards/);
    expect(() => parseLayout('{"timeIndex":"nope"}')).toThrow(/unknown time index/);
  });
});
