import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeIf } from '../../functions/adapters/dynamodb/client.js';
import { conditionOf, withCondition } from '../../functions/adapters/dynamodb/email-conditions.js';
import { toState } from '../../functions/adapters/dynamodb/email-items.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import {
  allows,
  TRANSITIONS,
  type Transition,
  type TransitionContext,
} from '../../functions/emails/lifecycle.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
beforeAll(async () => {
  table = await startTestTable();
});
afterAll(() => table.stop());

const iso = (ms: number) => new Date(ms).toISOString();
const NOW = 3_000;

/** Every combination of the facts the lifecycle's requirements look at (and no item at all). */
function statusItems(): (Record<string, unknown> | null)[] {
  const items: (Record<string, unknown> | null)[] = [null];
  for (const status of ['queued', 'delivered'])
    for (const sent of [false, true])
      for (const claimed of [undefined, 1_000])
        for (const scheduled of [undefined, iso(2_000), iso(4_000)])
          for (const requeued of [undefined, 1_500])
            for (const rcpts of [1, 2])
              items.push({
                status,
                created_at: iso(0),
                rcpts,
                ...(sent ? { sent_at: iso(2_500) } : {}),
                // The claim's mark: this context's, or another claim's of the same millisecond.
                ...(claimed === undefined ? {} : { send_started_at: claimed, claim: `mark-${rcpts}` }),
                ...(scheduled === undefined ? {} : { scheduled_at: scheduled }),
                ...(requeued === undefined ? {} : { requeued_at: requeued }),
              });
  return items;
}

const contexts: TransitionContext[] = [
  { nowMs: NOW, attemptStartedAt: 1_000, claimMark: 'mark-1', scheduledAt: iso(2_000), notSinceMs: 1_000 },
  { nowMs: NOW, attemptStartedAt: 2_000, claimMark: 'mark-1', scheduledAt: iso(4_000), notSinceMs: 2_000 },
];

describe('the lifecycle (emails/lifecycle.ts) and the writes that carry it (dynalite)', () => {
  it('allows a transition in code exactly where DynamoDB applies its conditional write, state by state', async () => {
    const id = newEmailId();
    const key = { pk: keys.email(id), sk: keys.status };
    const disagreements: string[] = [];
    let applied = 0;
    for (const item of statusItems()) {
      for (const transition of Object.keys(TRANSITIONS) as Transition[]) {
        for (const context of contexts) {
          if (item)
            await table.db.send(new PutCommand({ TableName: table.tableName, Item: { ...key, ...item } }));
          else await table.db.send(new DeleteCommand({ TableName: table.tableName, Key: key }));
          const written = await writeIf(
            table.db,
            new UpdateCommand({
              TableName: table.tableName,
              Key: key,
              UpdateExpression: 'SET probe = :probe',
              ...withCondition(conditionOf(transition, context), { values: { ':probe': 1 } }),
            }),
          );
          const state = item ? { ...toState(id, item), recipients: Number(item.rcpts) } : null;
          if (written) applied++;
          if (written !== allows(state, transition, context))
            disagreements.push(
              `${transition} ${JSON.stringify(item)} ${JSON.stringify(context)}: DynamoDB ${written}`,
            );
        }
      }
    }
    expect(disagreements).toEqual([]);
    // Both answers happen for every transition (the states cover each requirement both ways).
    expect(applied).toBeGreaterThan(0);
  }, 90_000);

  it('says what each transition needs, and refuses to write one without it', () => {
    expect(() => conditionOf('failAttempt')).toThrow(/needs the attempt it concerns/);
    expect(() => conditionOf('claim')).toThrow(/needs the time/);
    expect(() => conditionOf('releaseStanding', { attemptStartedAt: 1 })).toThrow(/needs the claim's mark/);
    expect(conditionOf('settleEvent').ConditionExpression).toBe('#status = :queued');
    // Every transition that ends an email requires it to be queued: forward only.
    for (const t of [
      'cancel',
      'endUnsent',
      'failAttempt',
      'settleSent',
      'settleEvent',
      'settleSingle',
    ] as const)
      expect(TRANSITIONS[t]).toContain('queued');
  });
});
