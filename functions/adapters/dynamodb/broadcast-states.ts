import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { BroadcastStates } from '../../emails/broadcast-lane.js';
import { keys } from './table.js';

/**
 * Whether a broadcast was canceled, for the lane's consumer (emails/broadcast-lane.ts): its item's
 * `status` (one GetItem of one attribute, strongly consistent), kept per container for `ttlMs`,
 * so a lane batch of one broadcast reads it about once a second, and a cancel reaches every
 * container within that. A broadcast not found is not canceled (a deleted draft has no emails).
 */
export class DynamoBroadcastStates implements BroadcastStates {
  private readonly seen = new Map<string, { at: number; canceled: Promise<boolean> }>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: { ttlMs?: number; now?: () => number } = {},
  ) {}

  canceled(broadcastId: string): Promise<boolean> {
    const now = (this.options.now ?? Date.now)();
    const kept = this.seen.get(broadcastId);
    if (kept && now - kept.at < (this.options.ttlMs ?? 1_000)) return kept.canceled;
    const canceled = this.read(broadcastId);
    // A read that fails is not kept: the next email asks again.
    canceled.catch(() => this.seen.delete(broadcastId));
    this.seen.set(broadcastId, { at: now, canceled });
    // A container sees few broadcasts at a time: the oldest entries go past a hundred.
    if (this.seen.size > 100) this.seen.delete(this.seen.keys().next().value as string);
    return canceled;
  }

  private async read(broadcastId: string): Promise<boolean> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.broadcasts, sk: keys.broadcast(broadcastId) },
        ProjectionExpression: '#status',
        ExpressionAttributeNames: { '#status': 'status' },
        ConsistentRead: true,
      }),
    );
    return Item?.status === 'canceled';
  }
}
