import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { PageQuery } from '../../shared/list.js';
import { SUPPRESSION_ID_PREFIX } from '../../suppressions/model.js';
import type { Suppression, SuppressionOrigin, SuppressionRepository } from '../../suppressions/ports.js';
import { batchGetAll, newestFirstPage, writeIf } from './client.js';
import { INDEXES, keys } from './table.js';
import { DEFAULT_LAYOUT, type TableLayout } from './table-layout.js';

type Item = Record<string, unknown>;

const toEntry = (item: Item): Suppression => ({
  id: String(item.id),
  email: String(item.email),
  origin: item.origin as SuppressionOrigin,
  source_id: (item.source_id as string | null | undefined) ?? null,
  created_at: String(item.created_at),
});

/**
 * The suppression list: one item per address, keyed by it (what the send consumer's one batch
 * read looks up), listed through the two listing indexes under their own partitions (all entries,
 * and per origin), sorted by id (time-sortable), as emails are.
 */
export class DynamoSuppressionRepository implements SuppressionRepository {
  /** The time index by name: it changes in the upgrade to keys-only (email-keys.ts). */
  private readonly timeIndex: string;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    layout: TableLayout = DEFAULT_LAYOUT,
  ) {
    this.timeIndex = layout.timeIndex;
  }

  private key(email: string) {
    return { pk: keys.suppression(email), sk: keys.suppressionSk };
  }

  async add(entry: Suppression): Promise<{ entry: Suppression; added: boolean }> {
    if (
      await writeIf(
        this.db,
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...this.key(entry.email),
            ...entry,
            [INDEXES.emailsByTime.partitionKey]: keys.suppressions,
            [INDEXES.emailsByTime.sortKey]: entry.id,
            [INDEXES.emailsByStatus.partitionKey]: keys.suppressionsWithOrigin(entry.origin),
            [INDEXES.emailsByStatus.sortKey]: entry.id,
          },
          // The first entry stands: a later bounce does not turn a manual entry into another.
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      )
    )
      return { entry, added: true };
    const existing = await this.byEmail(entry.email, true);
    // Removed between the two calls: on the list again would need another try; report it as added.
    return existing ? { entry: existing, added: false } : this.add(entry);
  }

  async find(emails: string[]): Promise<Map<string, Suppression>> {
    const unique = [...new Set(emails)];
    const items = await batchGetAll(
      this.db,
      this.tableName,
      unique.map((email) => this.key(email)),
    );
    return new Map(items.map((item) => [String(item.email), toEntry(item)]));
  }

  async get(idOrEmail: string): Promise<Suppression | null> {
    if (!idOrEmail.startsWith(`${SUPPRESSION_ID_PREFIX}_`)) return this.byEmail(idOrEmail, true);
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: this.timeIndex,
        KeyConditionExpression: '#pk = :pk AND #sk = :id',
        ExpressionAttributeNames: {
          '#pk': INDEXES.emailsByTime.partitionKey,
          '#sk': INDEXES.emailsByTime.sortKey,
        },
        ExpressionAttributeValues: { ':pk': keys.suppressions, ':id': idOrEmail },
      }),
    );
    const pk = Items?.[0]?.pk;
    if (typeof pk !== 'string') return null;
    const entry = await this.byEmail(pk.slice(keys.suppression('').length), true);
    return entry?.id === idOrEmail ? entry : null;
  }

  private async byEmail(email: string, consistent: boolean): Promise<Suppression | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(email), ConsistentRead: consistent }),
    );
    return Item ? toEntry(Item) : null;
  }

  async list(
    query: PageQuery & { origin?: SuppressionOrigin },
  ): Promise<{ data: Suppression[]; has_more: boolean }> {
    const index = query.origin ? INDEXES.emailsByStatus : INDEXES.emailsByTime;
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        IndexName: query.origin ? index.name : this.timeIndex,
        partitionKey: index.partitionKey,
        sortKey: index.sortKey,
        partition: query.origin ? keys.suppressionsWithOrigin(query.origin) : keys.suppressions,
        prefix: `${SUPPRESSION_ID_PREFIX}_`,
        sortKeyOf: (id) => id,
      },
      query,
    );
    if (items.length === 0) return { data: [], has_more };
    const found = await batchGetAll(
      this.db,
      this.tableName,
      items.map((item) => ({ pk: item.pk, sk: item.sk })),
    );
    const byPk = new Map(found.map((item) => [item.pk, item]));
    const data: Suppression[] = [];
    for (const item of items) {
      const entry = byPk.get(item.pk);
      // An entry removed (or removed and added again) since the index was read is left out.
      if (entry && entry.id === item[index.sortKey]) data.push(toEntry(entry));
    }
    return { data, has_more };
  }

  async remove(entry: Suppression): Promise<boolean> {
    return writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: this.key(entry.email),
        // This entry, not one added again since it was read.
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': entry.id },
      }),
    );
  }
}
