import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { AudienceCleanupStore } from '../../contacts/cleanup.js';
import type { CleanupJob } from '../../contacts/cleanup-jobs.js';
import { pause } from './client.js';
import { CONTACT_SHARDS, INDEXES, keys, TABLE_KEYS } from './table.js';

type Item = Record<string, unknown>;

/** BatchWriteItem's limit. */
const BATCH = 25;
/** Batches in flight at once. */
const PARALLEL = 4;

/** Where a job's items are listed: a partition of the table or of an index, and its sort key. */
interface Where {
  readonly index?: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly partition: string;
}

const TIME = INDEXES.emailsByTime;
const STATUS = INDEXES.emailsByStatus;

function whereOf(job: CleanupJob, shard: number, timeIndex: string): Where {
  switch (job.kind) {
    case 'contact':
      return { ...TABLE_KEYS, partition: keys.contactOf(job.contact_id) };
    case 'segment':
      return {
        index: timeIndex,
        partitionKey: TIME.partitionKey,
        sortKey: TIME.sortKey,
        partition: keys.segmentMembers(job.segment_id, shard),
      };
    case 'topic':
      return {
        index: STATUS.name,
        partitionKey: STATUS.partitionKey,
        sortKey: STATUS.sortKey,
        partition: keys.topicChoices(job.topic_id, shard),
      };
  }
}

/** The same job, from this shard and cursor on. */
function resumed(job: CleanupJob, shard: number, cursor: string | undefined): CleanupJob {
  const { cursor: _, ...rest } = job;
  if (job.kind === 'contact') return { ...rest, ...(cursor ? { cursor } : {}) } as CleanupJob;
  return { ...rest, shard, ...(cursor ? { cursor } : {}) } as CleanupJob;
}

/**
 * The audience clean-up on the single table (table.ts has the layout): a contact's memberships and
 * choices are its `CONTACTOF#<id>` partition (read strongly); a segment's memberships and a topic's
 * choices are the entries of their CONTACT_SHARDS partitions of the time and status indexes (keys
 * only: each entry carries its item's key), read shard by shard from the job's cursor (the last
 * sort key deleted), so a run never reads again what an earlier run deleted and the index has not
 * yet dropped. Deleted 25 to a BatchWriteItem, unprocessed items retried with backoff.
 */
export class DynamoAudienceCleanupStore implements AudienceCleanupStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The time index by its layout's name (it changes in the upgrade to keys-only: table-layout.ts). */
    private readonly timeIndex: string = TIME.name,
  ) {}

  async deleteSome(job: CleanupJob, max: number): Promise<{ deleted: number; next?: CleanupJob }> {
    const shards = job.kind === 'contact' ? 1 : CONTACT_SHARDS;
    let shard = job.kind === 'contact' ? 0 : (job.shard ?? 0);
    let cursor = job.cursor;
    let deleted = 0;
    while (shard < shards) {
      const where = whereOf(job, shard, this.timeIndex);
      let more = true;
      while (more && deleted < max) {
        const page = await this.page(where, cursor, max - deleted);
        await this.remove(page.items);
        deleted += page.items.length;
        const last = page.items.at(-1);
        if (last) cursor = String(last[where.sortKey]);
        more = page.more;
      }
      if (more) return { deleted, next: resumed(job, shard, cursor) };
      shard += 1;
      cursor = undefined;
      // The budget spent just as a shard ended: the next run starts at the next shard.
      if (deleted >= max && shard < shards) return { deleted, next: resumed(job, shard, undefined) };
    }
    return { deleted };
  }

  /** Up to `limit` entries after `cursor`, and whether the partition may hold more. */
  private async page(where: Where, cursor: string | undefined, limit: number) {
    const result = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        ...(where.index ? { IndexName: where.index } : { ConsistentRead: true }),
        KeyConditionExpression: cursor ? '#pk = :pk AND #sk > :cursor' : '#pk = :pk',
        ExpressionAttributeNames: { '#pk': where.partitionKey, ...(cursor ? { '#sk': where.sortKey } : {}) },
        ExpressionAttributeValues: { ':pk': where.partition, ...(cursor ? { ':cursor': cursor } : {}) },
        Limit: limit,
      }),
    );
    return { items: result.Items ?? [], more: result.LastEvaluatedKey !== undefined };
  }

  private async remove(items: Item[]): Promise<void> {
    const batches: Item[][] = [];
    for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));
    for (let i = 0; i < batches.length; i += PARALLEL)
      await Promise.all(batches.slice(i, i + PARALLEL).map((batch) => this.write(batch)));
  }

  private async write(batch: Item[]): Promise<void> {
    let pending = batch.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) {
        if (attempt > 5) throw new Error('DynamoDB did not take the deletes after 5 retries');
        await pause(25 * 2 ** attempt);
      }
      const result = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
      );
      pending = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
  }
}
