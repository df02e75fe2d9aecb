import { describe, expect, it } from 'vitest';
import { parseLayout } from '../../functions/adapters/dynamodb/email-keys.js';
import { DUE_INDEX, INDEXES, LEGACY_INDEXES, projectionOf } from '../../functions/adapters/dynamodb/table.js';
import type { EmailServiceStackProps } from '../../lib/email-service-stack.js';
import { logicalId, policiesOf, resourcesOf, synthStack } from '../support/template.js';

type Gsi = { IndexName: string; Projection: { ProjectionType: string } };

/** The table's indexes as the versions before sharding made them (emails-by-time projected status). */
const BEFORE: Record<string, string> = {
  [LEGACY_INDEXES.emailsByTime.name]: 'INCLUDE',
  [INDEXES.emailsByStatus.name]: 'INCLUDE',
  [DUE_INDEX.name]: 'KEYS_ONLY',
};

function synth(props: EmailServiceStackProps) {
  const { stack, template } = synthStack(props, `Step${props.upgradeStep ?? 'Final'}`);
  const [table] = Object.values(resourcesOf(template, 'AWS::DynamoDB::Table'));
  const indexes = Object.fromEntries(
    ((table?.Properties.GlobalSecondaryIndexes ?? []) as Gsi[]).map((gsi) => [
      gsi.IndexName,
      gsi.Projection.ProjectionType,
    ]),
  );
  /** What each function reads the time index by, and the index names its role may query. */
  const reads = (name: string) => {
    const fn = stack.functions[name];
    if (!fn) throw new Error(`no function ${name}`);
    const variables = (
      template.toJSON().Resources[logicalId(stack, fn)].Properties.Environment.Variables as Record<
        string,
        string
      >
    ).TABLE_LAYOUT;
    const granted = JSON.stringify(policiesOf(stack, template, name));
    return { layout: parseLayout(variables), granted };
  };
  return { indexes, reads };
}

/** The GSIs one deploy creates and deletes, going from `from` to `to`. */
function change(from: Record<string, string>, to: Record<string, string>) {
  const created = Object.keys(to).filter((name) => !(name in from));
  const deleted = Object.keys(from).filter((name) => !(name in to));
  // A projection cannot change in place: it would be a deletion and a creation.
  const replaced = Object.keys(to).filter((name) => name in from && from[name] !== to[name]);
  return { created, deleted, replaced };
}

describe('the upgrade from a table made before the keys-only time index, one index per deploy', () => {
  const step1 = synth({ upgradeStep: 1 });
  const step2 = synth({ upgradeStep: 2 });
  const final = synth({});

  it('changes one global secondary index per deploy (CloudFormation refuses more), never a projection in place', () => {
    const steps = [BEFORE, step1.indexes, step2.indexes, final.indexes];
    for (let i = 1; i < steps.length; i++) {
      const { created, deleted, replaced } = change(steps[i - 1] as never, steps[i] as never);
      expect(created.length + deleted.length, `step ${i}`).toBeLessThanOrEqual(1);
      expect(replaced, `step ${i}`).toEqual([]);
    }
    expect(change(BEFORE, step1.indexes).created).toEqual([INDEXES.emailsByTime.name]);
    // The search index waits for step 2: step 1 already adds an index.
    expect(change(step1.indexes, step2.indexes).created).toEqual([INDEXES.emailsBySearch.name]);
    expect(final.indexes[INDEXES.emailsBySearch.name]).toBe('KEYS_ONLY');
    // A table of the version before search (keys-only time index, no search index) gets it in one deploy.
    const { [INDEXES.emailsBySearch.name]: _, ...beforeSearch } = final.indexes;
    expect(change(beforeSearch, final.indexes)).toEqual({
      created: [INDEXES.emailsBySearch.name],
      deleted: [],
      replaced: [],
    });
    expect(change(step2.indexes, final.indexes).deleted).toEqual([LEGACY_INDEXES.emailsByTime.name]);
    expect(final.indexes[INDEXES.emailsByTime.name]).toBe(
      projectionOf(INDEXES.emailsByTime.name).ProjectionType,
    );
    expect(final.indexes[INDEXES.emailsByTime.name]).toBe('KEYS_ONLY');
  });

  it('has the lists read an index that holds every email at each step, and may query only it', () => {
    // Step 1: the new index is being filled (CloudFormation waits until it is), so they read the old.
    for (const [step, index, other] of [
      [step1, LEGACY_INDEXES.emailsByTime.name, INDEXES.emailsByTime.name],
      [step2, INDEXES.emailsByTime.name, LEGACY_INDEXES.emailsByTime.name],
      [final, INDEXES.emailsByTime.name, LEGACY_INDEXES.emailsByTime.name],
    ] as const) {
      expect(step.indexes[index]).toBeDefined();
      for (const name of ['list-emails', 'list-suppressions', 'get-suppression']) {
        const { layout, granted } = step.reads(name);
        expect(layout.timeIndex, name).toBe(index);
        expect(granted, name).toContain(`/index/${index}"`);
        expect(granted, name).not.toContain(`/index/${other}"`);
      }
    }
  });

  it('refuses searches at step 1, whose table has no search index, and serves them from step 2', () => {
    expect(step1.reads('list-emails').layout.searchOff).toBe(true);
    expect(step2.reads('list-emails').layout.searchOff).toBeUndefined();
    expect(final.reads('list-emails').granted).toContain(`/index/${INDEXES.emailsBySearch.name}"`);
  });

  it('leaves the deletion of the old index to the deploy after the functions stopped reading it', () => {
    // The deploy that deletes emails-by-time starts from functions that already read the new index.
    expect(step2.reads('list-emails').layout.timeIndex).toBe(INDEXES.emailsByTime.name);
    expect(step2.indexes[LEGACY_INDEXES.emailsByTime.name]).toBeDefined();
  });

  it('refuses an unknown step, and layouts that would lose emails or cannot be', () => {
    expect(() => synth({ upgradeStep: 3 as never })).toThrow(/upgradeStep must be 1 or 2/);
    expect(() => synth({ listingShards: 0 })).toThrow(/listingShards must be a whole number from 1 to 256/);
    expect(() => synth({ listingShards: 2.5 })).toThrow(/listingShards/);
    expect(() => synth({ emailRetentionDays: -1 })).toThrow(/emailRetentionDays/);
  });

  it('gives every function that reads the table the same layout: the shards and retention set', () => {
    const custom = synth({ listingShards: 64, emailRetentionDays: 90, upgradeStep: 2 });
    for (const name of [
      'send-email',
      'list-emails',
      'sweep-emails',
      'process-ses-events',
      'process-send-queue',
    ])
      expect(custom.reads(name).layout, name).toEqual({
        shards: 64,
        retentionDays: 90,
        timeIndex: INDEXES.emailsByTime.name,
      });
  });
});
