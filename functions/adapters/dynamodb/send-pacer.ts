import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SendPacer } from '../../shared/ports.js';
import { attributesIf, writeIf } from './client.js';
import { keys } from './table.js';

/**
 * The shared send schedule in the table: one small item whose `next_at` is the first moment no
 * send is booked for (ms). A batch books its recipients' time with one conditional UpdateItem:
 * - while sends are booked ahead (`next_at` ≥ now): `next_at += duration`, if `next_at` is no later
 *   than the batch's latest start; the batch starts at the old `next_at`;
 * - when nothing is booked (`next_at` < now, or no item): `next_at = now + duration`; it starts now.
 * Each is conditional on the case it is for, so two consumers never book the same time. Which to
 * try first follows the last `next_at` this instance saw: under load the first, when idle the
 * second, so a batch costs one write (two when traffic just started or stopped). When the
 * schedule is booked beyond the latest start, nothing is booked and one read says until when.
 * (One item takes up to 1,000 writes a second: a batch of 10 a write, 10,000 emails a second.)
 */
export class DynamoSendPacer implements SendPacer {
  private lastSeen = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private readonly key = { pk: keys.sendPace, sk: keys.sendPace };

  async reserve(
    durationMs: number,
    nowMs: number,
    latestStartMs: number,
  ): Promise<{ startAt: number } | { busyUntil: number }> {
    // `next_at` only ever moves forward: booked beyond the latest start when last seen, it still is.
    if (latestStartMs < nowMs || this.lastSeen > latestStartMs)
      return { busyUntil: Math.max(this.lastSeen, nowMs) };
    let busyFirst = this.lastSeen >= nowMs;
    for (let attempt = 0; attempt < 4; attempt++) {
      const startAt = busyFirst
        ? await this.after(durationMs, nowMs, latestStartMs)
        : await this.fresh(durationMs, nowMs);
      if (startAt !== undefined) {
        this.lastSeen = startAt + durationMs;
        return { startAt };
      }
      busyFirst = !busyFirst;
      // Both cases failed once: booked beyond the latest start (or moving fast): read how far.
      if (attempt % 2 === 1) {
        const { Item } = await this.db.send(
          new GetCommand({ TableName: this.tableName, Key: this.key, ConsistentRead: true }),
        );
        const next = Number(Item?.next_at ?? nowMs);
        this.lastSeen = next;
        if (next > latestStartMs) return { busyUntil: next };
        busyFirst = next >= nowMs;
      }
    }
    return { busyUntil: Math.max(this.lastSeen, latestStartMs) };
  }

  /** Books after what is booked, if that starts between now and the latest start. */
  private async after(durationMs: number, nowMs: number, latestStartMs: number) {
    const booked = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key,
        UpdateExpression: 'SET next_at = next_at + :duration',
        ConditionExpression: 'next_at BETWEEN :now AND :latest',
        ExpressionAttributeValues: { ':duration': durationMs, ':now': nowMs, ':latest': latestStartMs },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return booked ? Number(booked.next_at) - durationMs : undefined;
  }

  /** Books from now, if nothing is booked from now on. */
  private async fresh(durationMs: number, nowMs: number) {
    if (
      !(await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key,
          UpdateExpression: 'SET next_at = :next',
          ConditionExpression: 'attribute_not_exists(next_at) OR next_at < :now',
          ExpressionAttributeValues: { ':next': nowMs + durationMs, ':now': nowMs },
        }),
      ))
    )
      return undefined;
    return nowMs;
  }
}
