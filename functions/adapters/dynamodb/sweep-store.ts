import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EmailContent } from '../../core/email.js';
import { FIRST_EMAIL_ID } from '../../core/ids.js';
import type { EmailState, SweepProgress, SweepStore } from '../../core/ports.js';
import { isConditionFailure, queryPages } from './client.js';
import { readContent, readStates } from './email-repository.js';
import { DUE_INDEX, INDEXES, keys } from './table.js';

/**
 * What the sweeper reads and writes in the single table: the `emails-by-status` index's queued
 * partition (ids only), status items in batches, and one small progress item.
 */
export class DynamoSweepStore implements SweepStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async queuedIds(fromId: string, toId: string, limit: number): Promise<string[]> {
    const index = INDEXES.emailsByStatus;
    const ids: string[] = [];
    if (fromId >= toId) return ids;
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      IndexName: index.name,
      // toId is a boundary no real id equals (see ids.ts), so BETWEEN excludes it in effect.
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': keys.emailsWithStatus('queued'), ':from': fromId, ':to': toId },
      ProjectionExpression: '#sk',
      ScanIndexForward: true, // oldest first
      Limit: Math.min(limit, 1000),
    })) {
      for (const item of page) if (ids.length < limit) ids.push(String(item[index.sortKey]));
      if (ids.length >= limit) break;
    }
    return ids;
  }

  async states(ids: string[]): Promise<EmailState[]> {
    return readStates(this.db, this.tableName, ids);
  }

  content(id: string): Promise<EmailContent | null> {
    return readContent(this.db, this.tableName, id);
  }

  async markRequeued(id: string, nowMs: number, notSinceMs: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.email(id), sk: keys.status },
          UpdateExpression: 'SET requeued_at = :now',
          ConditionExpression:
            '#status = :queued AND attribute_not_exists(sent_at) AND attribute_not_exists(send_started_at) AND ' +
            '(attribute_not_exists(requeued_at) OR requeued_at < :notSince)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':queued': 'queued', ':now': nowMs, ':notSince': notSinceMs },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async progress(): Promise<SweepProgress> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.sweep, sk: keys.sweep } }),
    );
    return {
      fromId: typeof Item?.from_id === 'string' ? Item.from_id : FIRST_EMAIL_ID,
      oldCheckedAtMs: typeof Item?.old_checked_at === 'number' ? Item.old_checked_at : 0,
      oldFromId: typeof Item?.old_from_id === 'string' ? Item.old_from_id : FIRST_EMAIL_ID,
    };
  }

  async saveProgress(progress: SweepProgress, read: SweepProgress): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: keys.sweep,
            sk: keys.sweep,
            from_id: progress.fromId,
            old_checked_at: progress.oldCheckedAtMs,
            old_from_id: progress.oldFromId,
          },
          // Only over what this run read: a rewind (or another run) since then wins. (An item saved
          // before old_from_id existed counts as having none under way.)
          ConditionExpression:
            'attribute_not_exists(pk) OR (from_id = :from AND old_checked_at = :old AND ' +
            '(old_from_id = :oldFrom OR (attribute_not_exists(old_from_id) AND :oldFrom = :first)))',
          ExpressionAttributeValues: {
            ':from': read.fromId,
            ':old': read.oldCheckedAtMs,
            ':oldFrom': read.oldFromId,
            ':first': FIRST_EMAIL_ID,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async rewind(emailId: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.sweep, sk: keys.sweep },
          UpdateExpression: 'SET from_id = :id',
          // No progress item yet: the sweeper starts from the first email anyway.
          ConditionExpression: 'attribute_exists(pk) AND from_id > :id',
          ExpressionAttributeValues: { ':id': emailId },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async dueIds(until: string, limit: number): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      IndexName: DUE_INDEX.name,
      // '~' sorts after '#' and every id character: every email due at `until` itself is in.
      KeyConditionExpression: '#pk = :due AND #sk <= :until',
      ExpressionAttributeNames: { '#pk': DUE_INDEX.partitionKey, '#sk': DUE_INDEX.sortKey },
      ExpressionAttributeValues: { ':due': keys.due, ':until': `${until}~` },
      ScanIndexForward: true, // earliest first
      Limit: Math.min(limit, 1000),
    })) {
      for (const item of page)
        if (ids.length < limit) ids.push(keys.idOfDueSk(String(item[DUE_INDEX.sortKey])));
      if (ids.length >= limit) break;
    }
    return ids;
  }

  async markDispatched(id: string, scheduledAt: string, nowMs: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.email(id), sk: keys.status },
          // requeued_at: the sweeper's rules measure a lost message from when it was queued.
          UpdateExpression: 'SET dispatched = :at, requeued_at = :now',
          ConditionExpression:
            '#status = :queued AND scheduled_at = :at AND attribute_not_exists(sent_at) AND ' +
            'attribute_not_exists(send_started_at)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':queued': 'queued', ':at': scheduledAt, ':now': nowMs },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async unindexDue(id: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.email(id), sk: keys.status },
          UpdateExpression: `REMOVE ${DUE_INDEX.partitionKey}, ${DUE_INDEX.sortKey}`,
          // Only what can never be due again: sent, or final.
          ConditionExpression: 'attribute_exists(pk) AND (#status <> :queued OR attribute_exists(sent_at))',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':queued': 'queued' },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
