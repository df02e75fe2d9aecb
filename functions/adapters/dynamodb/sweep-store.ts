import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EmailContent } from '../../emails/email.js';
import type { DueEntry, EmailState, ScheduleCursor, SweepProgress, SweepStore } from '../../emails/ports.js';
import { FIRST_EMAIL_ID } from '../../shared/ids.js';
import { mergeSorted } from '../../shared/sorted-merge.js';
import { queryPages, querySource, writeIf } from './client.js';
import { conditionOf, withCondition } from './email-conditions.js';
import { readContent, readStates } from './email-items.js';
import { DEFAULT_LAYOUT, EmailKeys, type TableLayout } from './email-keys.js';
import { DUE_INDEX, INDEXES, keys } from './table.js';

/**
 * What the sweeper reads and writes in the single table: the `emails-by-status` index's queued
 * partition (ids only), status items in batches, and one small progress item.
 */
export class DynamoSweepStore implements SweepStore {
  private readonly keys: EmailKeys;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    layout: TableLayout = DEFAULT_LAYOUT,
  ) {
    this.keys = new EmailKeys(layout);
  }

  async queuedIds(fromId: string, toId: string, limit: number): Promise<string[]> {
    const index = INDEXES.emailsByStatus;
    if (fromId >= toId) return [];
    // Every shard of the queued emails, merged oldest first.
    const sources = this.keys.statusPartitions('queued').map((partition) =>
      querySource(this.db, {
        TableName: this.tableName,
        IndexName: index.name,
        // toId is a boundary no real id equals (see ids.ts), so BETWEEN excludes it in effect.
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        ExpressionAttributeValues: { ':pk': partition, ':from': fromId, ':to': toId },
        ProjectionExpression: '#sk',
        ScanIndexForward: true, // oldest first
      }),
    );
    const { entries } = await mergeSorted(sources, (item) => String(item[index.sortKey]), limit, 'ascending');
    return entries.map((item) => String(item[index.sortKey]));
  }

  async states(ids: string[]): Promise<EmailState[]> {
    return readStates(this.db, this.tableName, ids);
  }

  content(id: string): Promise<EmailContent | null> {
    return readContent(this.db, this.tableName, id);
  }

  markRequeued(id: string, nowMs: number, notSinceMs: number): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        UpdateExpression: 'SET requeued_at = :now',
        ...withCondition(conditionOf('requeue', { notSinceMs }), { values: { ':now': nowMs } }),
      }),
    );
  }

  async progress(): Promise<SweepProgress> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.sweep, sk: keys.sweep } }),
    );
    return {
      fromId: typeof Item?.from_id === 'string' ? Item.from_id : FIRST_EMAIL_ID,
      oldCheckedAtMs: typeof Item?.old_checked_at === 'number' ? Item.old_checked_at : 0,
      oldFromId: typeof Item?.old_from_id === 'string' ? Item.old_from_id : FIRST_EMAIL_ID,
      ...(typeof Item?.unresolved_from === 'string' ? { unresolvedFromId: Item.unresolved_from } : {}),
    };
  }

  saveProgress(progress: SweepProgress, read: SweepProgress): Promise<boolean> {
    return writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: keys.sweep,
          sk: keys.sweep,
          from_id: progress.fromId,
          old_checked_at: progress.oldCheckedAtMs,
          old_from_id: progress.oldFromId,
          ...(progress.unresolvedFromId ? { unresolved_from: progress.unresolvedFromId } : {}),
        },
        // Only over what this run read: a rewind (or another run) since then wins. (An item saved
        // before old_from_id existed counts as having none under way.)
        ConditionExpression:
          'attribute_not_exists(pk) OR (from_id = :from AND old_checked_at = :old AND ' +
          '(old_from_id = :oldFrom OR (attribute_not_exists(old_from_id) AND :oldFrom = :first)) AND ' +
          '(unresolved_from = :unresolved OR (attribute_not_exists(unresolved_from) AND :unresolved = :first)))',
        ExpressionAttributeValues: {
          ':from': read.fromId,
          ':old': read.oldCheckedAtMs,
          ':oldFrom': read.oldFromId,
          ':unresolved': read.unresolvedFromId ?? FIRST_EMAIL_ID,
          ':first': FIRST_EMAIL_ID,
        },
      }),
    );
  }

  async rewind(emailId: string): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.sweep, sk: keys.sweep },
        UpdateExpression: 'SET from_id = :id',
        // No progress item yet: the sweeper starts from the first email anyway.
        ConditionExpression: 'attribute_exists(pk) AND from_id > :id',
        ExpressionAttributeValues: { ':id': emailId },
      }),
    );
  }

  duePartitions(): string[] {
    return this.keys.duePartitions();
  }

  async dueIn(partition: string, fromSk: string, toSk: string, limit: number): Promise<DueEntry[]> {
    const entries: DueEntry[] = [];
    if (fromSk >= toSk || limit <= 0) return entries;
    // From the partition's start: DynamoDB refuses an empty string in a key condition.
    const range = fromSk === '' ? '#sk <= :to' : '#sk BETWEEN :from AND :to';
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      IndexName: DUE_INDEX.name,
      KeyConditionExpression: `#pk = :due AND ${range}`,
      ExpressionAttributeNames: { '#pk': DUE_INDEX.partitionKey, '#sk': DUE_INDEX.sortKey },
      ExpressionAttributeValues: {
        ':due': partition,
        ...(fromSk === '' ? {} : { ':from': fromSk }),
        ':to': toSk,
      },
      ScanIndexForward: true, // earliest first
      Limit: Math.min(limit, 1000),
    })) {
      for (const item of page)
        if (entries.length < limit) {
          const sk = String(item[DUE_INDEX.sortKey]);
          entries.push({ id: keys.idOfDueSk(sk), sk });
        }
      if (entries.length >= limit) break;
    }
    return entries;
  }

  async scheduleProgress(): Promise<Map<string, ScheduleCursor>> {
    const found = new Map<string, ScheduleCursor>();
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.schedule },
    }))
      for (const item of page)
        found.set(String(item.partition), {
          frontier: String(item.frontier ?? ''),
          watchFrom: String(item.watch_from ?? ''),
        });
    return found;
  }

  async saveScheduleProgress(partition: string, cursor: ScheduleCursor): Promise<void> {
    // Unconditional: two runs at once at worst make the next one read some entries again.
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: keys.schedule,
          sk: keys.scheduleShard(partition),
          partition,
          frontier: cursor.frontier,
          watch_from: cursor.watchFrom,
        },
      }),
    );
  }

  markDispatched(id: string, scheduledAt: string, nowMs: number): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        // requeued_at: the sweeper's rules measure a lost message from when it was queued.
        UpdateExpression: 'SET dispatched = :scheduledAt, requeued_at = :now',
        ...withCondition(conditionOf('dispatch', { scheduledAt }), { values: { ':now': nowMs } }),
      }),
    );
  }

  async unindexDue(id: string): Promise<void> {
    // Only what can never be due again: sent, or final.
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        UpdateExpression: `REMOVE ${EmailKeys.dueKeys}`,
        ...withCondition(conditionOf('leaveDueIndex')),
      }),
    );
  }
}
