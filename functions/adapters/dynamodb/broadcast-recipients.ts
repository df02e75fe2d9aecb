import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type {
  BounceType,
  BroadcastRecipientReads,
  ClickedLinkRow,
  RecipientRow,
  RowPage,
  RowPageQuery,
} from '../../broadcasts/recipients.js';
import type { BroadcastRecipientType } from '../../emails/broadcast-tally.js';
import { mergeSorted } from '../../shared/sorted-merge.js';
import { recipientShard } from './broadcast-tally.js';
import { querySource } from './client.js';
import { BROADCAST_RECIPIENT_SHARDS, keys, TABLE_KEYS } from './table.js';

type Item = Record<string, unknown>;

/**
 * The reads of a broadcast's tally (adapters/dynamodb/broadcast-tally.ts writes it): its recipients
 * of a type, the BROADCAST_RECIPIENT_SHARDS partitions of that type merged by address (only the
 * address's own partition with an `email` filter), and its clicked links (its partition's LINK#
 * items). A page reads from its cursor outwards, only as far as it needs (shared/sorted-merge.ts).
 */
export class DynamoBroadcastRecipientReads implements BroadcastRecipientReads {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async exists(broadcastId: string): Promise<boolean> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: {
          [TABLE_KEYS.partitionKey]: keys.broadcasts,
          [TABLE_KEYS.sortKey]: keys.broadcast(broadcastId),
        },
        ProjectionExpression: '#pk',
        ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey },
      }),
    );
    return Item !== undefined;
  }

  async recipients(
    broadcastId: string,
    type: BroadcastRecipientType,
    page: RowPageQuery & { email?: string; bounce_type?: BounceType },
  ): Promise<RowPage<RecipientRow>> {
    const shards =
      page.email === undefined
        ? Array.from({ length: BROADCAST_RECIPIENT_SHARDS }, (_, shard) => shard)
        : [recipientShard(page.email)];
    // An address's items: its sort keys are `<address>#<email id>`.
    const prefix = page.email === undefined ? '' : `${page.email}#`;
    const { rows, has_more } = await this.page(
      shards.map((shard) => keys.broadcastRecipients(broadcastId, type, shard)),
      prefix,
      page,
      page.bounce_type ? { expression: 'bounce_type = :bt', values: { ':bt': page.bounce_type } } : undefined,
    );
    return {
      has_more,
      rows: rows.map((item) => ({
        position: String(item[TABLE_KEYS.sortKey]),
        email: String(item.email),
        email_id: String(item.email_id),
        at: String(item.at),
        ...(typeof item.count === 'number' ? { count: item.count } : {}),
        ...(item.bounce_type ? { bounce_type: item.bounce_type as BounceType } : {}),
        ...(item.links
          ? {
              links: Object.values(item.links as Record<string, { url: string; clicks: number }>).map(
                (link) => ({ url: link.url, clicks: Number(link.clicks) }),
              ),
            }
          : {}),
      })),
    };
  }

  async clickedLinks(broadcastId: string, page: RowPageQuery): Promise<RowPage<ClickedLinkRow>> {
    const { rows, has_more } = await this.page([keys.broadcastOf(broadcastId)], 'LINK#', page);
    return {
      has_more,
      rows: rows.map((item) => ({
        position: String(item[TABLE_KEYS.sortKey]),
        url: String(item.url),
        clicks: Number(item.clicks ?? 0),
        unique_clicks: Number(item.unique_clicks ?? 0),
      })),
    };
  }

  /**
   * A page of sorted partitions merged, ascending by sort key (under `prefix`): after a position
   * (the rows after it), before one (the rows before it, read outwards and turned back), or from
   * the start; one row more than the page says whether there is more that way.
   */
  private async page(
    partitions: string[],
    prefix: string,
    page: RowPageQuery,
    filter?: { expression: string; values: Record<string, unknown> },
  ): Promise<{ rows: Item[]; has_more: boolean }> {
    const backwards = page.before !== undefined;
    // A key is never empty: with no prefix, the range starts at the lowest character.
    const start = prefix || '\u0001';
    const low = page.after !== undefined && page.after > start ? page.after : start;
    const high =
      page.before !== undefined && page.before < `${prefix}\uffff` ? page.before : `${prefix}\uffff`;
    if (low > high) return { rows: [], has_more: false };
    const sources = partitions.map((partition) =>
      querySource(this.db, {
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :low AND :high',
        ...(filter ? { FilterExpression: filter.expression } : {}),
        ExpressionAttributeNames: { '#pk': TABLE_KEYS.partitionKey, '#sk': TABLE_KEYS.sortKey },
        ExpressionAttributeValues: { ':pk': partition, ':low': low, ':high': high, ...filter?.values },
        ScanIndexForward: !backwards,
      }),
    );
    // BETWEEN is inclusive: the cursor's own row, if still there, is read and dropped.
    const cursor = page.after ?? page.before;
    const { entries } = await mergeSorted(
      sources,
      (item) => String(item[TABLE_KEYS.sortKey]),
      page.limit + 1 + (cursor === undefined ? 0 : 1),
      backwards ? 'descending' : 'ascending',
    );
    const rows = entries.filter((item) => item[TABLE_KEYS.sortKey] !== cursor);
    const taken = rows.slice(0, page.limit);
    return { rows: backwards ? taken.reverse() : taken, has_more: rows.length > page.limit };
  }
}
