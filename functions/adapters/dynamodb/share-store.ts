import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type OpenedShare,
  SHARE_VIEWS_PER_MINUTE,
  SHARE_WINDOW_MS,
  type ShareStore,
  type StoredShare,
} from '../../emails/share.js';
import { attributesIf } from './client.js';
import { keys, TTL_ATTRIBUTE } from './table.js';

/**
 * Share links (emails/share.ts): one item per link under its token's hash, deleted by TTL once it
 * expires (the expiry is also checked on every view, since TTL deletes within days, not at once).
 * A view is one conditional UpdateItem that counts it in the link's one-minute window and answers
 * the email's id: no read first. Only when that write's condition fails (a new window, an expired,
 * unknown or throttled link) is the item read, strongly, to say which, and a new window started
 * with a second conditional write.
 */
export class DynamoShareStore implements ShareStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly perWindow = SHARE_VIEWS_PER_MINUTE,
    private readonly windowMs = SHARE_WINDOW_MS,
  ) {}

  private key(hash: string) {
    return { pk: keys.share(hash), sk: keys.shareSk };
  }

  async create(share: StoredShare): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...this.key(share.hash),
          email_id: share.email_id,
          expires_ms: share.expires_ms,
          [TTL_ATTRIBUTE]: Math.ceil(share.expires_ms / 1000),
        },
        // A hash of 256 random bits never repeats; the condition makes sure no link is overwritten.
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  open(hash: string, nowMs: number): Promise<OpenedShare> {
    return this.count(hash, nowMs, 3);
  }

  /** `tries`: how many more times a view that lost a race (its window changed under it) is tried again. */
  private async count(hash: string, nowMs: number, tries: number): Promise<OpenedShare> {
    const window = Math.floor(nowMs / this.windowMs);
    const counted = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(hash),
        UpdateExpression: 'ADD n :one',
        ConditionExpression: 'expires_ms > :now AND w = :w AND n < :most',
        ExpressionAttributeValues: { ':one': 1, ':now': nowMs, ':w': window, ':most': this.perWindow },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (counted) return opened(counted);
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(hash), ConsistentRead: true }),
    );
    if (!Item) return { kind: 'unknown' };
    if (Number(Item.expires_ms) <= nowMs) return { kind: 'expired' };
    const throttled = (): OpenedShare => ({
      kind: 'throttled',
      retry_after_s: Math.max(1, Math.ceil(((window + 1) * this.windowMs - nowMs) / 1000)),
    });
    if (Item.w === window) {
      if (Number(Item.n) >= this.perWindow) return throttled();
      // Another view started this window between our two reads: count on it (again, a bounded
      // number of times; views racing that long are throttled, to be retried).
      return tries > 0 ? this.count(hash, nowMs, tries - 1) : throttled();
    }
    // The link's first view in this window: start it (another view may have just done so: then count on it).
    const started = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(hash),
        UpdateExpression: 'SET w = :w, n = :one',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(w) OR w <> :w)',
        ExpressionAttributeValues: { ':one': 1, ':w': window },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (started) return opened(started);
    return tries > 0 ? this.count(hash, nowMs, tries - 1) : throttled();
  }
}

const opened = (item: Record<string, unknown>): OpenedShare => ({
  kind: 'open',
  email_id: String(item.email_id),
  expires_ms: Number(item.expires_ms),
});
