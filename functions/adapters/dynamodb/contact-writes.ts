import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { addressKey, type Contact } from '../../contacts/contact.js';
import type { ContactWrites, NewContact } from '../../contacts/ports.js';
import {
  choiceItem,
  contactIdItem,
  contactIdKey,
  contactItem,
  contactKey,
  membershipItem,
} from './audience-items.js';
import { pause, writeIf } from './client.js';

type Item = Record<string, unknown>;
type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

/**
 * The contacts' writes (contacts/ports.ts) on the single table. An address change is one
 * TransactWriteItems (served locally by local/dynamo-transactions.ts). A create uses single-item
 * writes in an order a crash cannot make wrong. The contact item, keyed by its address, is the commit point: what a
 * create writes before it (the id item, memberships, choices) is keyed by the new contact's id,
 * which no reader finds until that item exists (a listing skips a membership whose contact is
 * missing or has another id; contactById checks the id), so a create that stops half-way leaves
 * nothing anyone sees.
 */
export class DynamoContactWrites implements ContactWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create({ contact, segmentIds, topics }: NewContact): Promise<boolean> {
    const at = contact.created_at;
    const around = [
      contactIdItem(contact),
      ...segmentIds.map((segment_id) =>
        membershipItem({ contact_id: contact.id, segment_id, created_at: at }),
      ),
      ...topics.map(({ id, subscription }) =>
        choiceItem({ contact_id: contact.id, topic_id: id, subscription, updated_at: at }),
      ),
    ];
    await this.batchWrite(around.map((Item) => ({ PutRequest: { Item } })));
    const put = await writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: contactItem(contact),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    if (!put)
      // Another contact has the address: take back what was written for this one (nothing reads it).
      await this.batchWrite(around.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
    return put;
  }

  async join(contactId: string, segmentIds: readonly string[], topics: NewContact['topics'], at: string) {
    await Promise.all([
      // As adding to a segment does (segment-store.ts addMember): one already there is kept.
      ...segmentIds.map((segment_id) =>
        writeIf(
          this.db,
          new PutCommand({
            TableName: this.tableName,
            Item: membershipItem({ contact_id: contactId, segment_id, created_at: at }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      ),
      ...topics.map(({ id, subscription }) =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: choiceItem({ contact_id: contactId, topic_id: id, subscription, updated_at: at }),
          }),
        ),
      ),
    ]);
  }

  async update(before: Contact, after: Contact): Promise<'updated' | 'changed' | 'taken'> {
    if (addressKey(before.email) === addressKey(after.email))
      return (await this.putOver(after, before.updated_at)) ? 'updated' : 'changed';
    // An address change: one TransactWriteItems, so no crash can leave the contact at both
    // addresses (listed twice, the old address still resolving). The old item goes on its version,
    // the new one is put where no item is, and the id item names the new address; DynamoDB's
    // cancellation reasons (one an item, in order) say which condition failed.
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: contactKey(before.email),
                ConditionExpression: 'id = :id AND updated_at = :before',
                ExpressionAttributeValues: { ':id': before.id, ':before': before.updated_at },
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: contactItem(after),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Put: { TableName: this.tableName, Item: contactIdItem(after) } },
          ],
        }),
      );
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const [old, moved] = error.CancellationReasons ?? [];
      if (old?.Code === 'ConditionalCheckFailed') return 'changed';
      if (moved?.Code === 'ConditionalCheckFailed') return 'taken';
      throw error;
    }
    return 'updated';
  }

  async remove(contact: Contact): Promise<boolean> {
    const removed = await writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: contactKey(contact.email),
        ConditionExpression: 'id = :id AND updated_at = :version',
        ExpressionAttributeValues: { ':id': contact.id, ':version': contact.updated_at },
      }),
    );
    if (removed)
      await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: contactIdKey(contact.id) }));
    return removed;
  }

  /** The whole item, over the version read. */
  private putOver(contact: Contact, version: string): Promise<boolean> {
    return writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: contactItem(contact),
        ConditionExpression: 'id = :id AND updated_at = :version',
        ExpressionAttributeValues: { ':id': contact.id, ':version': version },
      }),
    );
  }

  /** BatchWriteItem in calls of 25 side by side, each retrying what DynamoDB leaves unprocessed. */
  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    const calls: WriteRequest[][] = [];
    for (let i = 0; i < requests.length; i += 25) calls.push(requests.slice(i, i + 25));
    await Promise.all(
      calls.map(async (call) => {
        let pending = call;
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > 0) {
            if (attempt > 5) throw new Error('DynamoDB did not take the writes after 5 retries');
            await pause(25 * 2 ** attempt);
          }
          const result = await this.db.send(
            new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
          );
          pending = (result.UnprocessedItems?.[this.tableName] ?? []) as WriteRequest[];
        }
      }),
    );
  }
}

/** The factory a contact function names for its wiring (wiring/contacts.ts), so only those that write bundle this. */
export const contactWrites = (t: { db: DynamoDBDocumentClient; name: string }) =>
  new DynamoContactWrites(t.db, t.name);
