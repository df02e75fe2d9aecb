import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { ContactImport, ImportStatus } from '../../contact-imports/model.js';
import type {
  Checkpoint,
  ChunkWrite,
  CommitOutcome,
  ContactImportStore,
} from '../../contact-imports/ports.js';
import type { Contact } from '../../contacts/contact.js';
import { addressKey } from '../../contacts/contact.js';
import type { PageQuery } from '../../shared/list.js';
import {
  choiceItem,
  contactIdItem,
  contactItem,
  contactKey,
  membershipItem,
  toContact,
} from './audience-items.js';
import { batchGetAll, newestFirstPage } from './client.js';
import { keys } from './table.js';

type Item = Record<string, unknown>;

const importKey = (id: string) => ({ pk: keys.imports, sk: keys.contactImport(id) });

const toImport = (item: Item): ContactImport => item.job as ContactImport;

/**
 * The contact imports (table.ts: `IMPORTS` / `IMPORT#<id>`, newest first by their UUIDv7 ids): one
 * item each, the import as it stands under `job`, its checkpoint's offset also at the top (`offset`)
 * for the commit's condition. A chunk's contacts (each with its id item), memberships and choices
 * and the checkpoint are one TransactWriteItems (at most 100 items: the worker sizes its chunks so):
 * a new contact on `attribute_not_exists(pk)`, a changed one on its `updated_at` as read, the
 * checkpoint on its offset as read. DynamoDB's cancellation reasons say which failed: the
 * checkpoint's (the last item) means another step went on; a contact's, that it changed meanwhile.
 * (TransactWriteItems is granted as each of its writes' own actions: PutItem and UpdateItem.)
 */
export class DynamoContactImportStore implements ContactImportStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(job: ContactImport): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...importKey(job.id), id: job.id, status: job.status, offset: job.offset, job },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(id: string, consistent = false): Promise<ContactImport | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: importKey(id), ConsistentRead: consistent }),
    );
    return Item ? toImport(Item) : undefined;
  }

  async list(
    query: PageQuery & { status?: ImportStatus },
  ): Promise<{ data: ContactImport[]; has_more: boolean }> {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.imports,
        prefix: keys.contactImport(''),
        sortKeyOf: (id) => keys.contactImport(id),
        ...(query.status
          ? {
              filter: {
                expression: '#status = :status',
                names: { '#status': 'status' },
                values: { ':status': query.status },
              },
            }
          : {}),
      },
      query,
    );
    return { data: items.map(toImport), has_more };
  }

  async contacts(addresses: readonly string[]): Promise<Map<string, Contact>> {
    const unique = [...new Set(addresses.map(addressKey))];
    const items = await batchGetAll(this.db, this.tableName, unique.map(contactKey), undefined, true);
    return new Map(items.map((item) => [String(item.address), toContact(item)]));
  }

  async commit(id: string, from: number, write: ChunkWrite, to: Checkpoint): Promise<CommitOutcome> {
    const TableName = this.tableName;
    const writes: Record<string, unknown>[] = [];
    for (const contact of write.created) {
      writes.push({
        Put: { TableName, Item: contactItem(contact), ConditionExpression: 'attribute_not_exists(pk)' },
      });
      writes.push({ Put: { TableName, Item: contactIdItem(contact) } });
    }
    for (const { contact, seen } of write.updated)
      writes.push({
        Put: {
          TableName,
          Item: contactItem(contact),
          ConditionExpression: 'id = :id AND updated_at = :seen',
          ExpressionAttributeValues: { ':id': contact.id, ':seen': seen },
        },
      });
    for (const membership of write.memberships)
      writes.push({ Put: { TableName, Item: membershipItem(membership) } });
    for (const choice of write.choices) writes.push({ Put: { TableName, Item: choiceItem(choice) } });
    const current = await this.get(id, true);
    if (!current || current.offset !== from) return 'moved';
    const job: ContactImport = {
      ...current,
      status: to.status,
      completed_at: to.completed_at,
      counts: to.counts,
      failures: to.failures,
      header: to.header,
      offset: to.offset,
      row: to.row,
      error: to.error,
    };
    writes.push({
      Update: {
        TableName,
        Key: importKey(id),
        UpdateExpression: 'SET #offset = :to, #status = :status, job = :job, updated_at = :at',
        ConditionExpression: '#offset = :from',
        ExpressionAttributeNames: { '#offset': 'offset', '#status': 'status' },
        ExpressionAttributeValues: {
          ':to': to.offset,
          ':from': from,
          ':status': to.status,
          ':job': job,
          ':at': to.updated_at,
        },
      },
    });
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: writes as never }));
      return 'committed';
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      if (reasons[reasons.length - 1]?.Code === 'ConditionalCheckFailed') return 'moved';
      if (reasons.some((reason) => reason.Code === 'ConditionalCheckFailed')) return 'contacts';
      throw error;
    }
  }
}
