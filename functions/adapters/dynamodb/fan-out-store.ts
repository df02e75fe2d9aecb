import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Broadcast, BroadcastStatus, FanOutProgress } from '../../broadcasts/broadcast.js';
import type { FanOutStore } from '../../broadcasts/fan-out-ports.js';
import { writeIf } from './client.js';
import { keys } from './table.js';

type Item = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A broadcast item as stored (design: its `Broadcast` fields by the same names, plus pk and sk). */
export const toBroadcast = (item: Item): Broadcast => ({
  id: String(item.id),
  name: text(item.name),
  segment_id: text(item.segment_id),
  from: String(item.from),
  subject: String(item.subject ?? ''),
  reply_to: Array.isArray(item.reply_to) ? (item.reply_to as string[]) : [],
  preview_text: text(item.preview_text),
  html: text(item.html),
  text: text(item.text),
  topic_id: text(item.topic_id),
  status: item.status as BroadcastStatus,
  created_at: String(item.created_at),
  scheduled_at: text(item.scheduled_at),
  sent_at: text(item.sent_at),
  generation: Number(item.generation ?? 0),
  ...(item.waiting ? { waiting: item.waiting as NonNullable<Broadcast['waiting']> } : {}),
  ...(item.fanout ? { fanout: item.fanout as FanOutProgress } : {}),
});

/**
 * The fan-out's writes on the broadcast item: only `fanout`, `waiting`, `status` (queued or
 * scheduled → sending → sent, and back to queued while it waits) and `sent_at`, each an UpdateItem
 * conditioned on the broadcast's generation and status, so a step of an old generation (the
 * broadcast canceled, or sent again) changes nothing, and the API's own writes (its fields, the
 * generation) are never erased.
 */
export class DynamoFanOutStore implements FanOutStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private readonly key = (id: string) => ({ pk: keys.broadcasts, sk: keys.broadcast(id) });

  async get(id: string): Promise<Broadcast | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(id), ConsistentRead: true }),
    );
    return Item ? toBroadcast(Item) : undefined;
  }

  private update(
    id: string,
    expression: string,
    condition: string,
    values: Item,
    names: Record<string, string> = {},
  ) {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: expression,
        ConditionExpression: `attribute_exists(pk) AND #generation = :g AND ${condition}`,
        ExpressionAttributeNames: { '#generation': 'generation', '#status': 'status', ...names },
        ExpressionAttributeValues: values,
      }),
    );
  }

  begin(id: string, generation: number, progress: FanOutProgress, sentAt: string) {
    return this.update(
      id,
      'SET fanout = :p, #status = :sending, sent_at = :at REMOVE waiting',
      '#status IN (:queued, :scheduled) AND attribute_not_exists(fanout)',
      {
        ':g': generation,
        ':p': progress,
        ':at': sentAt,
        ':sending': 'sending',
        ':queued': 'queued',
        ':scheduled': 'scheduled',
      },
    );
  }

  checkpoint(id: string, generation: number, previousPageAt: number, next: FanOutProgress) {
    return this.update(
      id,
      'SET fanout = :p, #status = :sending REMOVE waiting',
      // The page's own page_at: another step that moved it on first wins, this one changes nothing.
      '#status IN (:queued, :sending) AND fanout.page_at = :previous',
      {
        ':g': generation,
        ':p': next,
        ':previous': previousPageAt,
        ':sending': 'sending',
        ':queued': 'queued',
      },
    );
  }

  wait(id: string, generation: number, waiting: NonNullable<Broadcast['waiting']>) {
    return this.update(
      id,
      'SET waiting = :w, #status = :queued',
      '#status IN (:queued, :scheduled, :sending)',
      {
        ':g': generation,
        ':w': waiting,
        ':queued': 'queued',
        ':scheduled': 'scheduled',
        ':sending': 'sending',
      },
    );
  }

  finish(id: string, generation: number) {
    return this.update(
      id,
      'SET #status = :sent REMOVE waiting',
      '#status = :sending AND fanout.done = :true',
      {
        ':g': generation,
        ':sent': 'sent',
        ':sending': 'sending',
        ':true': true,
      },
    );
  }
}

/** The factory the fan-out's wiring names (wiring/broadcast-fanout.ts). */
export const fanOutStore = (t: { db: DynamoDBDocumentClient; name: string }) =>
  new DynamoFanOutStore(t.db, t.name);
