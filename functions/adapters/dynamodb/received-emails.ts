import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Bounds } from '../../receiving/bounds.js';
import type { ReceivedEmail } from '../../receiving/model.js';
import type { ReceivedEmailRepository } from '../../receiving/ports.js';
import type { PageQuery } from '../../shared/list.js';
import { newestFirstPage, writeIf } from './client.js';
import { keys, TTL_ATTRIBUTE } from './table.js';

/** Received emails' days in the table (and in the bucket, by its own rule): the stack's receivedRetentionDays. */
export const DEFAULT_RECEIVED_RETENTION_DAYS = 30;
/**
 * A claim whose email item is still missing this long after it was made belongs to an invocation
 * that died between the two writes: another may take it over (the sweep looks at raw messages 15
 * minutes old, and SES's retries come later than this).
 */
export const STALE_CLAIM_MS = 5 * 60_000;

/**
 * Received emails (receiving/model.ts) in the single table:
 * - the email: pk `RECEIVED`, sk its id (a UUIDv7, so the one partition lists newest first with one
 *   Query, cursors being ids), every field but the bodies (in S3);
 * - the claim of SES's message id: pk `RECEIVEDMSG#<ses message id>`, sk `RECEIVEDMSG`, `{ id,
 *   claimed_at }`, put only where none is: the first invocation to claim a message stores it, a
 *   second (SES's retry of the Lambda action, the sweep) finds its email.
 * Both expire (TTL) `retentionDays` after the email was received, with its objects in the bucket.
 *
 * One partition takes 1,000 writes a second, about 500 received messages a second (two writes
 * each, then the notified mark): far above what an account receives (docs/scale.md).
 */
export class DynamoReceivedEmailRepository implements ReceivedEmailRepository {
  private readonly retentionDays: number;
  private readonly now: () => number;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { retentionDays?: number; now?: () => number } = {},
  ) {
    this.retentionDays = options.retentionDays ?? DEFAULT_RECEIVED_RETENTION_DAYS;
    this.now = options.now ?? Date.now;
  }

  async store(email: ReceivedEmail): Promise<{ email: ReceivedEmail; created: boolean }> {
    const expiresAt = this.expiryOf(email.created_at);
    const claimKey = { pk: keys.receivedMessage(email.ses_message_id), sk: keys.receivedMessageSk };
    const claim = { ...claimKey, id: email.id, claimed_at: this.now(), [TTL_ATTRIBUTE]: expiresAt };
    const claimed = await writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: claim,
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    if (!claimed) {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: claimKey, ConsistentRead: true }),
      );
      const winner = Item ? { id: String(Item.id), claimedAt: Number(Item.claimed_at ?? 0) } : undefined;
      const stored = winner ? await this.get(winner.id) : null;
      if (stored) return { email: stored, created: false };
      if (winner && winner.id !== email.id) {
        // Claimed by another invocation (its own id) that has not stored its email: still at it,
        // or dead. A live one is left to finish (this invocation fails, to be retried); a dead one's
        // claim is taken over, unless someone took it first.
        if (this.now() - winner.claimedAt < STALE_CLAIM_MS)
          throw new Error(`received message ${email.ses_message_id} is being stored by another invocation`);
        const tookOver = await writeIf(
          this.db,
          new PutCommand({
            TableName: this.tableName,
            Item: claim,
            ConditionExpression: 'id = :id',
            ExpressionAttributeValues: { ':id': winner.id },
          }),
        );
        if (!tookOver) return this.store(email);
      }
      // The claim is this email's (the same message handed over again after a crash): store it.
    }
    const created = await writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: keys.received, sk: email.id, ...email, [TTL_ATTRIBUTE]: expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    if (created) return { email, created: true };
    return { email: (await this.get(email.id)) ?? email, created: false };
  }

  async markNotified(id: string): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.received, sk: id },
        UpdateExpression: 'SET notified = :yes',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':yes': true },
      }),
    );
  }

  async addRecipients(id: string, recipients: string[]): Promise<ReceivedEmail | null> {
    for (let attempt = 1; ; attempt++) {
      const email = await this.get(id);
      if (!email) return null;
      const bound = new Bounds();
      const merged = bound.addresses([...new Set([...email.received_for, ...recipients])]);
      // Nothing new, or nothing new that fits (then marked truncated, once).
      if (merged.length === email.received_for.length && (email.truncated || !bound.truncated)) return email;
      const truncated = email.truncated || bound.truncated;
      // Written only over the list it was read with: two invocations adding at once both land.
      const written = await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.received, sk: id },
          UpdateExpression: `SET received_for = :merged${truncated ? ', truncated = :yes' : ''}`,
          // Only this adds to the list, and only by appending: the same size is the same list.
          ConditionExpression: 'size(received_for) = :read',
          ExpressionAttributeValues: {
            ':merged': merged,
            ':read': email.received_for.length,
            ...(truncated ? { ':yes': true } : {}),
          },
        }),
      );
      if (written)
        return { ...email, received_for: merged, ...(truncated ? { truncated: true as const } : {}) };
      if (attempt >= 5)
        throw new Error(`received email ${id}: its recipients keep changing under this write`);
    }
  }

  async get(id: string): Promise<ReceivedEmail | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.received, sk: id }, ConsistentRead: true }),
    );
    return Item ? toReceivedEmail(Item) : null;
  }

  async bySesMessageId(sesMessageId: string): Promise<ReceivedEmail | null> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.receivedMessage(sesMessageId), sk: keys.receivedMessageSk },
        ConsistentRead: true,
      }),
    );
    return Item ? this.get(String(Item.id)) : null;
  }

  async list(query: PageQuery): Promise<{ data: ReceivedEmail[]; has_more: boolean }> {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.received,
        // Every id is a UUIDv7, whose first hex digit stays 0 until the year 10889 (its first 48
        // bits are the Unix time in ms); a Query's key condition needs a non-empty bound.
        prefix: '0',
        sortKeyOf: (id) => id,
      },
      query,
    );
    return { data: items.map(toReceivedEmail), has_more };
  }

  private expiryOf(createdAt: string): number {
    const created = Date.parse(createdAt) || this.now();
    return Math.floor(created / 1000) + this.retentionDays * 86_400;
  }
}

function toReceivedEmail(item: Record<string, unknown>): ReceivedEmail {
  const { pk: _pk, sk: _sk, [TTL_ATTRIBUTE]: _expires, ...email } = item;
  return email as unknown as ReceivedEmail;
}
