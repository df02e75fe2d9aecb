import { createHash } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { BroadcastTotals, BroadcastTotalsReader } from '../../broadcasts/broadcast.js';
import type { BroadcastEnded, BroadcastTally, BroadcastTallyEntry } from '../../emails/broadcast-tally.js';
import { emailIdTime } from '../../shared/ids.js';
import { attributesIf, writeIf } from './client.js';
import {
  BROADCAST_RECIPIENT_SHARDS,
  BROADCAST_TOTAL_SHARDS,
  keys,
  shardOf,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
} from './table.js';

const DAY_MS = 86_400_000;

/** The totals' counters (BroadcastTotals), each an attribute of every totals shard. */
export const TOTAL_NAMES = [
  'sent',
  'delivered',
  'opened',
  'unique_opened',
  'clicked',
  'unique_clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'suppressed',
  'ended',
] as const satisfies readonly (keyof BroadcastTotals)[];

/** A link's digest: the sort key of its clicked-link item and of each recipient's first-click mark. */
export const linkDigest = (url: string) => createHash('sha256').update(url).digest('base64url').slice(0, 22);

/** The shard of a broadcast's recipients of a type an address is in (an `email` filter reads only it). */
export const recipientShard = (address: string) => shardOf(address, BROADCAST_RECIPIENT_SHARDS);

/** A recipient item's sort key: its address, then its email (one item per email of the broadcast). */
export const recipientSk = (address: string, emailId: string) => `${address}#${emailId}`;

/**
 * A broadcast's tally (emails/broadcast-tally.ts), written as its emails' outcomes are first recorded:
 *
 * - a **recipient item** per (type, address, email) in one of BROADCAST_RECIPIENT_SHARDS partitions
 *   of the type (by the address), sorted by address: what `GET /v1/broadcasts/{id}/recipients?type=`
 *   lists. An outcome (sent, delivered, bounced, complained, unsubscribed, suppressed) is put once
 *   (a conditional put: a repeat adds nothing, to the item or to the totals); an open or click adds to
 *   its `count`, a click to its link's clicks in `links` (url digest → {url, clicks}). It expires
 *   with the email (`expires_at`, the email retention).
 * - the **totals**: BROADCAST_TOTAL_SHARDS counter items (the shard by the email id), each in a
 *   partition of its own, ADDed to, summed at read (8 Queries side by side): an email's events,
 *   thousands a second over a broadcast, never crowd one partition (1,000 writes a second each).
 * - a **clicked link** item per url: its clicks, and its unique clicks, counted when a recipient's
 *   first-click mark for that link (a conditional put) is new. The links share the broadcast's one
 *   partition: each click is a write or two there, so a broadcast's clicks are held to about 500 a
 *   second (people clicking, spread over hours: a 1,000,000-recipient broadcast's 2 % click rate is
 *   20,000 clicks), where its sends and deliveries, thousands a second, go to the sharded totals.
 *
 * Only UpdateItem and PutItem are written (an outcome's two in one TransactWriteItems); nothing is
 * read at write time.
 */
export class DynamoBroadcastTally implements BroadcastTally, BroadcastTotalsReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Days an email's items are kept (0: until deleted): the recipient items and marks go with it. */
    private readonly retentionDays = 30,
  ) {}

  async record(entry: BroadcastTallyEntry): Promise<void> {
    const { broadcastId, emailId, type } = entry;
    const address = entry.address.toLowerCase();
    const key = {
      [TABLE_KEYS.partitionKey]: keys.broadcastRecipients(broadcastId, type, recipientShard(address)),
      [TABLE_KEYS.sortKey]: recipientSk(address, emailId),
    };
    const base = { email: address, email_id: emailId, at: entry.at, ...this.expiry(emailId) };
    if (type === 'opened') {
      const old = await attributesIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          ...setting(base, 'ADD #count :one'),
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const first = old?.count === undefined;
      await this.add(broadcastId, emailId, { opened: 1, unique_opened: first ? 1 : 0 });
      return;
    }
    if (type === 'clicked') {
      const url = entry.link ?? '';
      const digest = linkDigest(url);
      const [firstOfLink, firstOfRecipient] = await Promise.all([
        writeIf(
          this.db,
          new PutCommand({
            TableName: this.tableName,
            Item: {
              [TABLE_KEYS.partitionKey]: keys.broadcastClicks(broadcastId, emailId),
              [TABLE_KEYS.sortKey]: keys.broadcastLinkSk(digest),
              at: entry.at,
              ...this.expiry(emailId),
            },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
          }),
        ),
        this.click(key, base, digest, url),
      ]);
      await Promise.all([
        this.add(broadcastId, emailId, { clicked: 1, unique_clicked: firstOfRecipient ? 1 : 0 }),
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: {
              [TABLE_KEYS.partitionKey]: keys.broadcastOf(broadcastId),
              [TABLE_KEYS.sortKey]: keys.broadcastLinkSk(digest),
            },
            UpdateExpression: 'SET #url = if_not_exists(#url, :url) ADD clicks :one, unique_clicks :unique',
            ExpressionAttributeNames: { '#url': 'url' },
            ExpressionAttributeValues: { ':url': url, ':one': 1, ':unique': firstOfLink ? 1 : 0 },
          }),
        ),
      ]);
      return;
    }
    // An outcome: once per email, its item and its count in one transaction (a repeat finds its
    // item and changes nothing; a failure leaves neither, so the call may simply be made again).
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { ...key, ...base, ...(entry.bounceType ? { bounce_type: entry.bounceType } : {}) },
                ConditionExpression: 'attribute_not_exists(#pk)',
                ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
              },
            },
            { Update: { TableName: this.tableName, ...this.addition(broadcastId, emailId, { [type]: 1 }) } },
          ],
        }),
      );
    } catch (error) {
      const repeated =
        error instanceof TransactionCanceledException &&
        error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
      if (!repeated) throw error;
    }
  }

  async ended(entry: BroadcastEnded): Promise<void> {
    await this.add(entry.broadcastId, entry.emailId, { ended: 1 });
  }

  /** The totals, as DynamoBroadcastTotals reads them. */
  totals(broadcastId: string): Promise<BroadcastTotals> {
    return new DynamoBroadcastTotals(this.db, this.tableName).totals(broadcastId);
  }

  /** Adds to one shard of the broadcast's totals (the email's shard). */
  private async add(broadcastId: string, emailId: string, counts: Partial<BroadcastTotals>) {
    await this.db.send(
      new UpdateCommand({ TableName: this.tableName, ...this.addition(broadcastId, emailId, counts) }),
    );
  }

  /** The update that adds these counts to the email's shard of the totals. */
  private addition(broadcastId: string, emailId: string, counts: Partial<BroadcastTotals>) {
    const names = Object.keys(counts) as (keyof BroadcastTotals)[];
    const shard = shardOf(emailId, BROADCAST_TOTAL_SHARDS);
    return {
      Key: {
        [TABLE_KEYS.partitionKey]: keys.broadcastTotals(broadcastId, shard),
        [TABLE_KEYS.sortKey]: keys.broadcastTotalsSk,
      },
      UpdateExpression: `ADD ${names.map((_name, i) => `#n${i} :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#n${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name, i) => [`:v${i}`, counts[name] ?? 0])),
    };
  }

  /**
   * One click of a recipient on a link: its count and the link's clicks in `links`. A nested path
   * can only be added to once its map exists, so the first click of a link (and the recipient's first
   * click at all) is a write of its own, each conditioned on what it finds; a race between two
   * first clicks goes round again. True when this click made the recipient's item (its first click).
   */
  private async click(
    key: Record<string, string>,
    base: Record<string, unknown>,
    digest: string,
    url: string,
  ): Promise<boolean> {
    const names = { '#links': 'links', '#d': digest };
    for (let round = 0; round < 3; round++) {
      const again = await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #links.#d.clicks = #links.#d.clicks + :one ADD #count :one',
          ConditionExpression: 'attribute_exists(#links.#d)',
          ExpressionAttributeNames: { ...names, '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1 },
        }),
      );
      if (again) return false;
      const newLink = await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #links.#d = :entry ADD #count :one',
          ConditionExpression: 'attribute_exists(#links) AND attribute_not_exists(#links.#d)',
          ExpressionAttributeNames: { ...names, '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':entry': { url, clicks: 1 } },
        }),
      );
      if (newLink) return false;
      const first = setting(base, 'ADD #count :one');
      const made = await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          ...first,
          UpdateExpression: first.UpdateExpression.replace('SET ', 'SET #links = :links, '),
          ConditionExpression: 'attribute_not_exists(#links)',
          ExpressionAttributeNames: { ...first.ExpressionAttributeNames, '#links': 'links' },
          ExpressionAttributeValues: {
            ...first.ExpressionAttributeValues,
            ':links': { [digest]: { url, clicks: 1 } },
          },
        }),
      );
      if (made) return true;
    }
    throw new Error('a click raced with others three times over; not recorded');
  }

  /** When an email's items expire (none when emails are kept until deleted). */
  private expiry(emailId: string): Record<string, number> {
    const created = emailIdTime(emailId);
    if (this.retentionDays === 0 || !Number.isFinite(created)) return {};
    return { [TTL_ATTRIBUTE]: Math.ceil((created + this.retentionDays * DAY_MS) / 1000) };
  }
}

/**
 * An update that sets these attributes where the item has none yet (its first event's time and
 * address stay), plus `rest` (an ADD clause).
 */
function setting(attributes: Record<string, unknown>, rest: string) {
  const names = Object.keys(attributes);
  return {
    UpdateExpression: `SET ${names.map((_, i) => `#a${i} = if_not_exists(#a${i}, :a${i})`).join(', ')} ${rest}`,
    ExpressionAttributeNames: {
      ...Object.fromEntries(names.map((name, i) => [`#a${i}`, name])),
      '#count': 'count',
    } as Record<string, string>,
    ExpressionAttributeValues: {
      ...Object.fromEntries(names.map((name, i) => [`:a${i}`, attributes[name]])),
      ':one': 1,
    } as Record<string, unknown>,
  };
}

/**
 * A broadcast's totals alone (what get-broadcast and the fan-out read): its BROADCAST_TOTAL_SHARDS
 * counter partitions, one Query each, side by side, summed.
 */
export class DynamoBroadcastTotals implements BroadcastTotalsReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async totals(broadcastId: string): Promise<BroadcastTotals> {
    // One Query per shard's partition, side by side (each a partition of one item).
    const shards = await Promise.all(
      Array.from({ length: BROADCAST_TOTAL_SHARDS }, (_, shard) =>
        this.db.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
            ExpressionAttributeValues: { ':pk': keys.broadcastTotals(broadcastId, shard) },
            ConsistentRead: true,
          }),
        ),
      ),
    );
    const totals = Object.fromEntries(TOTAL_NAMES.map((name) => [name, 0])) as unknown as BroadcastTotals;
    for (const { Items = [] } of shards)
      for (const item of Items)
        for (const name of TOTAL_NAMES) totals[name] += typeof item[name] === 'number' ? item[name] : 0;
    return totals;
  }
}
