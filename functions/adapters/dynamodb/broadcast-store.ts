import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Broadcast, BroadcastContent, BroadcastStatus } from '../../broadcasts/broadcast.js';
import type { BroadcastStore, Expected, Page, StatusChange } from '../../broadcasts/ports.js';
import type { PageQuery } from '../../shared/list.js';
import { newestFirstPage, writeIf } from './client.js';
import { keys, TABLE_KEYS } from './table.js';

type Item = Record<string, unknown>;

const keyOf = (id: string) => ({ pk: keys.broadcasts, sk: keys.broadcast(id) });

/** The stored item: the broadcast's fields by their own names, beside its keys. */
const itemOf = (broadcast: Broadcast): Item => ({ ...keyOf(broadcast.id), ...broadcast });

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A broadcast read back (a field absent, as from an older item, is its empty value). */
export function toBroadcast(item: Item): Broadcast {
  return {
    id: String(item.id),
    name: text(item.name),
    segment_id: text(item.segment_id),
    from: String(item.from ?? ''),
    subject: String(item.subject ?? ''),
    reply_to: Array.isArray(item.reply_to) ? item.reply_to.map(String) : [],
    preview_text: text(item.preview_text),
    html: text(item.html),
    text: text(item.text),
    topic_id: text(item.topic_id),
    status: item.status as BroadcastStatus,
    created_at: String(item.created_at),
    scheduled_at: text(item.scheduled_at),
    sent_at: text(item.sent_at),
    generation: Number(item.generation ?? 0),
    ...(item.waiting ? { waiting: item.waiting as Broadcast['waiting'] & object } : {}),
    ...(item.fanout ? { fanout: item.fanout as Broadcast['fanout'] & object } : {}),
  };
}

/** `#status IN (:s0, …) AND generation = :g`, with its names and values. */
function expectation(expected: Expected) {
  const values: Item = { ':g': expected.generation };
  expected.statuses.forEach((status, i) => {
    values[`:s${i}`] = status;
  });
  return {
    condition: `attribute_exists(pk) AND generation = :g AND #status IN (${expected.statuses.map((_, i) => `:s${i}`).join(', ')})`,
    names: { '#status': 'status' } as Record<string, string>,
    values,
  };
}

/**
 * Broadcasts: one partition (BROADCASTS), sorted by their UUIDv7 ids, an item each holding the
 * content, status, generation and (written by the fan-out alone) its progress. Every change but the
 * creation is an UpdateItem of the API's own fields, conditioned on the status and generation read:
 * the fan-out's attributes beside them are never overwritten (design: the fan-out writes `fanout`,
 * `waiting`, `sent_at` and its own statuses, conditioned on the generation).
 */
export class DynamoBroadcastStore implements BroadcastStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(broadcast: Broadcast): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: itemOf(broadcast),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(id: string): Promise<Broadcast | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keyOf(id), ConsistentRead: true }),
    );
    return Item ? toBroadcast(Item) : undefined;
  }

  async list(page: PageQuery): Promise<Page<Broadcast>> {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: TABLE_KEYS.partitionKey,
        sortKey: TABLE_KEYS.sortKey,
        partition: keys.broadcasts,
        prefix: keys.broadcast(''),
        sortKeyOf: keys.broadcast,
      },
      page,
    );
    return { data: items.map(toBroadcast), has_more };
  }

  updateDraft(id: string, generation: number, content: Partial<BroadcastContent>): Promise<boolean> {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Item = { ':draft': 'draft', ':g': generation };
    const sets: string[] = [];
    for (const [field, value] of Object.entries(content)) {
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: keyOf(id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND #status = :draft AND generation = :g',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  /**
   * A send from a draft also removes any `fanout` and `waiting` left by an earlier send that was
   * canceled while scheduled: the new send's fan-out begins from the start.
   */
  changeStatus(id: string, expected: Expected, change: StatusChange): Promise<boolean> {
    const { condition, names, values } = expectation(expected);
    const sets = ['#status = :status', 'generation = :next'];
    const next: Item = { ...values, ':status': change.status, ':next': change.generation };
    if (change.scheduled_at !== undefined) {
      sets.push('scheduled_at = :at');
      next[':at'] = change.scheduled_at;
    }
    const restarts =
      expected.statuses.length === 1 &&
      expected.statuses[0] === 'draft' &&
      (change.status === 'queued' || change.status === 'scheduled');
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: keyOf(id),
        UpdateExpression: `SET ${sets.join(', ')}${restarts ? ' REMOVE fanout, waiting' : ''}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: next,
      }),
    );
  }

  remove(id: string, expected: Expected): Promise<boolean> {
    const { condition, names, values } = expectation(expected);
    return writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: keyOf(id),
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }
}
