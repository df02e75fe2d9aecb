import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContactImport } from '../../functions/contact-imports/model.js';
import { runImportStep, type StepLimits } from '../../functions/contact-imports/run.js';
import { MemoryImportFiles, MemoryImportQueue, MemoryImportStore } from '../support/memory-imports.js';

const SEGMENT = '019abcd0-0000-7000-8000-000000000001';
const TOPIC = '019abcd0-0000-7000-8000-000000000002';
const PLAN = '019abcd0-0000-7000-8000-000000000003';

function setUp(csv: string, over: Partial<ContactImport> = {}, piece?: number) {
  const store = new MemoryImportStore();
  const files = new MemoryImportFiles(piece);
  const queue = new MemoryImportQueue();
  const id = randomUUID();
  files.files.set(`imports/${id}.csv`, Buffer.from(csv));
  const job: ContactImport = {
    id,
    status: 'queued',
    file: `imports/${id}.csv`,
    created_at: '2026-11-28T00:00:00.000Z',
    completed_at: null,
    counts: { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 },
    failures: [],
    header: null,
    offset: 0,
    row: 0,
    error: null,
    on_conflict: 'skip',
    column_map: null,
    properties: [],
    segments: [],
    topics: [],
    ...over,
  };
  store.jobs.set(id, job);
  let n = 0;
  const deps = { store, files, queue, clock: { now: () => new Date() }, newId: () => `c-${++n}` };
  /** Runs steps as the queue would deliver them (a failed one delivered again) until the import ends. */
  const drain = async (limits: StepLimits = {}) => {
    const outcomes: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      try {
        const outcome = await runImportStep(deps, id, limits);
        outcomes.push(outcome);
        if (outcome !== 'continued') return outcomes;
      } catch (error) {
        outcomes.push(`crashed: ${(error as Error).message}`);
      }
    }
    throw new Error('the import never ended');
  };
  return { store, files, queue, id, deps, drain, job: () => store.jobs.get(id) as ContactImport };
}

describe('an import step (contact-imports/run.ts)', () => {
  it('creates, skips, updates and fails rows, each counted once, with the reasons of the failed', async () => {
    const csv =
      '\ufeffEmail,First,Plan,Unsub\r\n' +
      'ann@example.com,Ann,7,no\r\n' +
      'not an address,Bob,1,\r\n' +
      '\r\n' +
      '"cy@example.com","Cy, ""the third""",x,\n' +
      'ANN@example.com,Annie,8,yes\n' +
      'dee@example.com,,,maybe';
    const t = setUp(csv, {
      on_conflict: 'upsert',
      column_map: { email: 'email', first_name: 'First', unsubscribed: 'Unsub' },
      properties: [{ key: 'plan', column: 'Plan', property_id: PLAN, type: 'number' }],
      segments: [SEGMENT],
      topics: [{ id: TOPIC, subscription: 'opt_in' }],
    });
    expect(await t.drain()).toEqual(['completed']);
    const job = t.job();
    expect(job.status).toBe('completed');
    expect(job.completed_at).not.toBeNull();
    expect(job.counts).toEqual({ total: 5, created: 1, updated: 1, skipped: 0, failed: 3 });
    expect(job.failures).toEqual([
      { row: 2, reason: 'email: "not an address" is not an email address' },
      { row: 3, reason: 'properties.plan: "x" is not a number' },
      { row: 5, reason: 'unsubscribed: "maybe" is not true or false' },
    ]);
    const ann = t.store.contactsByAddress.get('ann@example.com');
    expect(ann).toMatchObject({
      email: 'ann@example.com',
      first_name: 'Annie',
      unsubscribed: true,
      props: { [PLAN]: 8 },
    });
    expect(t.store.memberships.get(`${ann?.id}|${SEGMENT}`)).toBeDefined();
    expect(t.store.choices.get(`${ann?.id}|${TOPIC}`)?.subscription).toBe('opt_in');
  });

  it('skips an address that has a contact with on_conflict "skip" (the default)', async () => {
    const t = setUp('email\na@example.com\nA@EXAMPLE.COM\n');
    await t.drain();
    expect(t.job().counts).toEqual({ total: 2, created: 1, updated: 0, skipped: 1, failed: 0 });
    expect(t.store.contactsByAddress.size).toBe(1);
  });

  it('fails the import, not a row, when a mapped column is not in the header or the file is empty', async () => {
    const missing = setUp('email,name\na@example.com,A\n', { column_map: { first_name: 'First' } });
    expect(await missing.drain()).toEqual(['failed']);
    expect(missing.job().error).toBe('column_map.first_name: the file has no column "First"');
    const empty = setUp('');
    expect(await empty.drain()).toEqual(['failed']);
    expect(empty.job().error).toMatch(/empty/);
  });

  it('hands the rest to a new message when a step reaches its rows, and ends where the file ends', async () => {
    const rows = Array.from({ length: 250 }, (_, i) => `p${i}@example.com`).join('\n');
    const t = setUp(`email\n${rows}\n`);
    const outcomes = await t.drain({ maxRows: 100 });
    expect(outcomes).toEqual(['continued', 'continued', 'completed']);
    expect(t.queue.steps).toHaveLength(2);
    expect(t.job().counts.created).toBe(250);
  });

  it('a second delivery of a step running at once writes nothing twice (the checkpoint moved: it stops)', async () => {
    const rows = Array.from({ length: 2_000 }, (_, i) => `d${i}@example.com`).join('\n');
    const t = setUp(`email\n${rows}\n`, { segments: [SEGMENT] });
    const outcomes = await Promise.all([runImportStep(t.deps, t.id), runImportStep(t.deps, t.id)]);
    expect(outcomes.sort()).toEqual(['completed', 'stopped']);
    expect(t.job().counts).toEqual({ total: 2_000, created: 2_000, updated: 0, skipped: 0, failed: 0 });
    expect(t.store.contactsByAddress.size).toBe(2_000);
  });

  // The test: 100,000 rows, a crash injected part-way (before a commit, and after one),
  // the step delivered again: the counts are exact and no contact is written twice.
  // 100,000 rows once (a crash before a commit); 20,000 with a crash after one (the parse is most of the time).
  for (const [when, size] of [
    ['before', 100_000],
    ['after', 20_000],
  ] as const)
    it(`imports ${size} rows with a crash ${when} a commit part-way: exact counts, no duplicates`, async () => {
      const lines = ['email,first_name'];
      for (let i = 0; i < size; i++) {
        if (i % 1_000 === 999) lines.push(`bad-${i},Bad`);
        else if (i % 1_000 === 500) lines.push(`user${i - 1}@example.com,Again`);
        else lines.push(`user${i}@example.com,User ${i}`);
      }
      const t = setUp(`${lines.join('\n')}\n`, { segments: [SEGMENT] }, 7_777);
      t.store.crash = { at: Math.floor(size / 80), when };
      const outcomes = await t.drain({ maxRows: 40_000 });
      expect(outcomes.filter((o) => o.startsWith('crashed'))).toHaveLength(1);
      expect(outcomes.at(-1)).toBe('completed');
      const job = t.job();
      const bad = size / 1_000;
      const created = size - 2 * bad;
      expect(job.counts).toEqual({ total: size, created, updated: 0, skipped: bad, failed: bad });
      expect(t.store.contactsByAddress.size).toBe(created);
      expect(t.store.idItems.size).toBe(created);
      expect(t.store.memberships.size).toBe(created);
      expect(job.failures).toHaveLength(bad);
      expect(job.failures[0]).toEqual({ row: 1_000, reason: 'email: "bad-999" is not an email address' });
    });
});
