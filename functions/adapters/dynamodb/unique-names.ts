import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { NameClaim } from '../../shared/ports.js';
import { writeIf } from './client.js';

/**
 * Names one entity at a time may hold (a domain's name, a template's alias), as one item per name
 * that says who holds it: `{id, state, claimed_at}`. A create claims the name before it makes
 * anything, and gives it back if it fails; `active` (set by the entity's store, where it marks it)
 * holds a name for good. A claim whose create died (it never became its entity, and never gave it
 * back) is taken over by the next claim once it is `leaseMs` old: the item still names the dead
 * create, so every takeover is a conditional write on it, and two claims never both win.
 */
export class UniqueNames {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly keyOf: (name: string) => { pk: string; sk: string },
  ) {}

  /**
   * Claims `name` for the entity `id`, or says who holds it. `holds(holder)`: whether the entity
   * that claimed it exists and holds it (then it is kept, whatever its age). `fields`: what else
   * the item carries (the name as written).
   */
  async claim(
    name: string,
    id: string,
    options: {
      nowMs: number;
      leaseMs: number;
      holds: (holder: string) => Promise<boolean>;
      fields?: Record<string, unknown>;
    },
  ): Promise<NameClaim> {
    const { nowMs, leaseMs, holds, fields = {} } = options;
    const Item = { ...this.keyOf(name), ...fields, id, state: 'creating', claimed_at: nowMs };
    // Free, or this entity's own claim not yet active (a retry, or an entity claiming its own name).
    if (
      await writeIf(
        this.db,
        new PutCommand({
          TableName: this.tableName,
          Item,
          ConditionExpression:
            'attribute_not_exists(pk) OR (id = :id AND (attribute_not_exists(#state) OR #state <> :active))',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':id': id, ':active': 'active' },
        }),
      )
    )
      return { claimed: true };
    const { Item: held } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.keyOf(name), ConsistentRead: true }),
    );
    const holder = String(held?.id ?? '');
    if (held?.state === 'active') return { claimed: false, id: holder, state: 'active' };
    // Older than a create takes, and no entity holds it: its create died. Taken over, on the
    // condition that the item is still that claim.
    const stale = held !== undefined && Number(held.claimed_at ?? 0) < nowMs - leaseMs;
    if (stale && !(await holds(holder))) {
      const taken = await writeIf(
        this.db,
        new PutCommand({
          TableName: this.tableName,
          Item,
          ConditionExpression:
            'id = :holder AND (attribute_not_exists(claimed_at) OR claimed_at < :stale) AND (attribute_not_exists(#state) OR #state <> :active)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':holder': holder, ':stale': nowMs - leaseMs, ':active': 'active' },
        }),
      );
      if (taken) return { claimed: true };
    }
    return { claimed: false, id: holder, state: 'creating' };
  }

  /** Gives back a claim that never became its entity, or that its entity lets go (it only ever held it while creating). */
  async release(name: string, id: string): Promise<void> {
    await writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: this.keyOf(name),
        ConditionExpression: 'id = :id AND (attribute_not_exists(#state) OR #state <> :active)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':id': id, ':active': 'active' },
      }),
    );
  }
}
