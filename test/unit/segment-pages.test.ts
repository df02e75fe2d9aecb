/**
 * The in-memory page of a contact's segments (segments.ts `pageOf`, a contact is in a few segments at
 * most), paged as the stored lists page: newest first, `offset`, `after` and `before` an id; and
 * the clean-up's check of the jobs its queue carries (contacts/cleanup.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseCleanupJob } from '../../functions/contacts/cleanup.js';
import { pageOf } from '../../functions/segments/segments.js';

const ids = ['e', 'd', 'c', 'b', 'a'];
const page = (q: { limit: number; offset?: number; after?: string; before?: string }) =>
  pageOf(ids, (id) => id, { offset: 0, ...q });

describe('a page of a list in memory', () => {
  it('pages from the newest, from an offset, after and before an id (which need not exist)', () => {
    expect(page({ limit: 2 })).toEqual({ data: ['e', 'd'], has_more: true });
    expect(page({ limit: 2, offset: 4 })).toEqual({ data: ['a'], has_more: false });
    expect(page({ limit: 2, after: 'd' })).toEqual({ data: ['c', 'b'], has_more: true });
    expect(page({ limit: 2, after: 'bb' })).toEqual({ data: ['b', 'a'], has_more: false });
    expect(page({ limit: 2, before: 'b' })).toEqual({ data: ['d', 'c'], has_more: true });
    expect(page({ limit: 2, before: 'd' })).toEqual({ data: ['e'], has_more: false });
  });
});

describe('a clean-up job from the queue', () => {
  it('takes the three kinds, with where a job carries on', () => {
    for (const job of [
      { kind: 'contact', contact_id: 'c' },
      { kind: 'segment', segment_id: 's', shard: 3, cursor: 'x' },
      { kind: 'topic', topic_id: 't', shard: 0 },
    ])
      expect(parseCleanupJob(JSON.stringify(job))).toEqual(job);
  });

  it('refuses anything else', () => {
    for (const body of [
      '{}',
      '{"kind":"segment"}',
      '{"kind":"topic","topic_id":"t","shard":-1}',
      '{"kind":"contact","contact_id":""}',
      '{"kind":"everything"}',
    ])
      expect(() => parseCleanupJob(body)).toThrow(/not an audience clean-up job/);
    expect(() => parseCleanupJob('not json')).toThrow();
  });
});
