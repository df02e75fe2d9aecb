import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UniqueNames } from '../../functions/adapters/dynamodb/unique-names.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let names: UniqueNames;
const keyOf = (name: string) => ({ pk: `NAME#${name.toLowerCase()}`, sk: 'NAME' });
const LEASE = 10_000;
/** Which entities exist and hold their name (what the repository's `holds` reads). */
const existing = new Set<string>();
const claim = (name: string, id: string, nowMs: number) =>
  names.claim(name, id, { nowMs, leaseMs: LEASE, holds: async (holder) => existing.has(holder) });

beforeAll(async () => {
  table = await startTestTable();
  names = new UniqueNames(table.db, table.tableName, keyOf);
});
afterAll(() => table.stop());

describe('a unique name held by an entity (adapters/dynamodb/unique-names.ts, dynalite)', () => {
  it('is claimed once: a second claim is told who holds it, the first claim again is its own', async () => {
    expect(await claim('acme.test', 'dom_a', 1_000)).toEqual({ claimed: true });
    expect(await claim('ACME.test', 'dom_b', 2_000)).toEqual({
      claimed: false,
      id: 'dom_a',
      state: 'creating',
    });
    expect(await claim('acme.test', 'dom_a', 3_000)).toEqual({ claimed: true });
  });

  it('is taken over once its create died (older than the lease, its entity never made), and only then', async () => {
    expect(await claim('died.test', 'dom_dead', 1_000)).toEqual({ claimed: true });
    // Within its lease: a create under way.
    expect(await claim('died.test', 'dom_new', 1_000 + LEASE - 1)).toMatchObject({ claimed: false });
    expect(await claim('died.test', 'dom_new', 1_000 + LEASE + 1)).toEqual({ claimed: true });
    // The dead create's retry finds it held by the one that took it over.
    expect(await claim('died.test', 'dom_dead', 1_000 + LEASE + 2)).toMatchObject({
      claimed: false,
      id: 'dom_new',
    });
  });

  it('is kept, whatever its age, while its entity exists, and for good once it is active', async () => {
    existing.add('tpl_live');
    expect(await claim('welcome', 'tpl_live', 1_000)).toEqual({ claimed: true });
    expect(await claim('welcome', 'tpl_other', 1_000 + 10 * LEASE)).toEqual({
      claimed: false,
      id: 'tpl_live',
      state: 'creating',
    });
    expect(await claim('kept.test', 'dom_kept', 1_000)).toEqual({ claimed: true });
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keyOf('kept.test'),
        UpdateExpression: 'SET #state = :active',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':active': 'active' },
      }),
    );
    expect(await claim('kept.test', 'dom_other', 1_000 + 10 * LEASE)).toEqual({
      claimed: false,
      id: 'dom_kept',
      state: 'active',
    });
    // An active name is not given back by a release (its entity's delete removes it).
    await names.release('kept.test', 'dom_kept');
    expect(await claim('kept.test', 'dom_other', 2_000)).toMatchObject({ claimed: false, state: 'active' });
  });

  it('is given back only by the claim that holds it', async () => {
    expect(await claim('given.test', 'dom_1', 1_000)).toEqual({ claimed: true });
    await names.release('given.test', 'dom_2');
    expect(await claim('given.test', 'dom_3', 1_500)).toMatchObject({ claimed: false, id: 'dom_1' });
    await names.release('given.test', 'dom_1');
    expect(await claim('given.test', 'dom_3', 1_600)).toEqual({ claimed: true });
  });
});
