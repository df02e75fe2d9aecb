/**
 * Merging sorted sources (the shards of a listing index) into one sorted page, reading only what
 * the page needs.
 *
 * Each source is read in chunks of `chunkOf(wanted, sources)` entries, the first chunk of every
 * source side by side, later chunks only from a source whose entries were all taken while the page
 * still needs more. An entry read and not taken is at most the rest of its source's last chunk, so
 * a page of `wanted` entries reads at most
 *
 *   wanted + sources × chunk  ≤  2 × wanted + 3 × sources     (readBound)
 *
 * entries in all (a chunk is ⌈wanted / sources⌉ + 2, never more than 1,000). The same entries come
 * out in the same order however they are spread over the sources: an unsharded listing and a
 * sharded one answer alike.
 */
export interface SortedSource<T> {
  /** Up to `count` more entries, in the merge's order; `done` once the source has no more. */
  read(count: number): Promise<{ entries: T[]; done: boolean }>;
}

export type MergeOrder = 'descending' | 'ascending';

/** Entries each source is asked for at a time, for a page of `wanted` entries over `sources` sources. */
export const chunkOf = (wanted: number, sources: number) =>
  Math.min(1000, Math.ceil(wanted / Math.max(1, sources)) + 2);

/** The most entries `mergeSorted` reads for a page of `wanted` entries over `sources` sources. */
export const readBound = (wanted: number, sources: number) => wanted + sources * chunkOf(wanted, sources);

/**
 * The first `wanted` entries of the merged sources, in `order` of `keyOf` (keys are unique across
 * sources; a key seen twice is taken once), and how many entries were read to find them.
 */
export async function mergeSorted<T>(
  sources: SortedSource<T>[],
  keyOf: (entry: T) => string,
  wanted: number,
  order: MergeOrder,
): Promise<{ entries: T[]; read: number }> {
  const chunk = chunkOf(wanted, sources.length);
  const state = sources.map((source) => ({ source, buffer: [] as T[], done: false }));
  let read = 0;
  const fill = async (s: (typeof state)[number]) => {
    while (s.buffer.length === 0 && !s.done) {
      const { entries, done } = await s.source.read(chunk);
      read += entries.length;
      s.buffer.push(...entries);
      s.done = done;
    }
  };
  await Promise.all(state.map(fill));
  const before = (a: string, b: string) => (order === 'descending' ? a > b : a < b);
  const taken: T[] = [];
  let last: string | undefined;
  let from: (typeof state)[number] | undefined;
  while (taken.length < wanted) {
    // The source just taken from reads on only now that the page needs another entry.
    if (from) await fill(from);
    let best: (typeof state)[number] | undefined;
    for (const s of state) {
      const head = s.buffer[0];
      if (head === undefined) continue;
      const bestHead = best?.buffer[0];
      if (bestHead === undefined || before(keyOf(head), keyOf(bestHead))) best = s;
    }
    if (!best) break;
    const entry = best.buffer.shift() as T;
    const key = keyOf(entry);
    if (key !== last) taken.push(entry);
    last = key;
    from = best;
  }
  return { entries: taken, read };
}
