import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SendQuota, SendQuotaStore, StoredSendQuota } from '../../shared/pacing.js';
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
 * Durations are fractions of a millisecond (whole microseconds: shared/pacing.ts durationMs), so
 * the schedule carries the rate itself, not the whole milliseconds above it. One item takes up to
 * 1,000 writes a second; a batch is a write, so the schedule carries up to 1,000 × sendBatchSize
 * emails a second, and the service keeps it under 60 % of that (docs/scale.md).
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

/**
 * The account's SES limits beside the schedule (`SENDPACE` / `SES_ACCOUNT`), so that one consumer
 * instance reads GetAccount for all: `read_at` (ms) says when SES was read, `claimed_until` (ms)
 * until when the instance whose conditional claim won is reading it. A claim and a read kept are
 * one UpdateItem each, once per read of SES (every few minutes); the instances read the item
 * every few seconds (GetItem). Its writes are a handful a refresh against the partition's 1,000 a
 * second, which the schedule's bookings use at most 60 % of (docs/scale.md).
 */
export class DynamoSendQuotaStore implements SendQuotaStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private readonly key = { pk: keys.sendPace, sk: keys.sendPaceAccount };

  async get(): Promise<StoredSendQuota> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.key, ConsistentRead: true }),
    );
    if (!Item) return {};
    const claim = Item.claimed_until === undefined ? {} : { claimedUntil: Number(Item.claimed_until) };
    if (Item.read_at === undefined) return claim;
    return {
      quota: {
        maxSendRate: Number(Item.max_send_rate),
        max24HourSend: Number(Item.max_24_hour_send),
        sentLast24Hours: Number(Item.sent_last_24_hours),
        sendingEnabled: Item.sending_enabled === true,
      },
      readAt: Number(Item.read_at),
      ...claim,
    };
  }

  claim(nowMs: number, seenReadAt: number | undefined, leaseMs: number): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key,
        UpdateExpression: 'SET claimed_until = :until',
        ConditionExpression: `(attribute_not_exists(claimed_until) OR claimed_until <= :now) AND ${
          seenReadAt === undefined ? 'attribute_not_exists(read_at)' : 'read_at = :seen'
        }`,
        ExpressionAttributeValues: {
          ':until': nowMs + leaseMs,
          ':now': nowMs,
          ...(seenReadAt === undefined ? {} : { ':seen': seenReadAt }),
        },
      }),
    );
  }

  async put(quota: SendQuota, readAtMs: number): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key,
        UpdateExpression:
          'SET max_send_rate = :rate, max_24_hour_send = :max, sent_last_24_hours = :sent, sending_enabled = :enabled, read_at = :at',
        ConditionExpression: 'attribute_not_exists(read_at) OR read_at < :at',
        ExpressionAttributeValues: {
          ':rate': quota.maxSendRate,
          ':max': quota.max24HourSend,
          ':sent': quota.sentLast24Hours,
          ':enabled': quota.sendingEnabled,
          ':at': readAtMs,
        },
      }),
    );
  }
}
