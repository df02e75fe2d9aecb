import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Contact, Subscription } from '../../contacts/contact.js';
import type { UnsubscribeStore } from '../../unsubscribe/ports.js';
import {
  choiceItem,
  choiceKey,
  contactIdItem,
  contactIdKey,
  contactItem,
  contactKey,
  toContact,
} from './audience-items.js';
import { attributesIf, writeIf } from './client.js';

type Choice = { topicId: string; subscription: Subscription };

/**
 * The unsubscribe pages' writes (unsubscribe/ports.ts), through audience-items.ts: a topic choice
 * is one conditional PutItem of its own item (written only when it differs); a global unsubscribe
 * one conditional UpdateItem of the contact's item; a new contact its id item and choices, then
 * its item (PutItems, the last conditional; no transaction).
 */
export class DynamoUnsubscribeStore implements UnsubscribeStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async setChoices(contact: Pick<Contact, 'id'>, choices: readonly Choice[], at: string): Promise<string[]> {
    // One conditional put each: only a choice that differs is written, so of concurrent clicks on
    // one link exactly one writes (and raises the event).
    const written = await Promise.all(
      choices.map(async ({ topicId, subscription }) =>
        (await writeIf(
          this.db,
          new PutCommand({
            TableName: this.tableName,
            Item: choiceItem({ contact_id: contact.id, topic_id: topicId, subscription, updated_at: at }),
            ConditionExpression: 'attribute_not_exists(pk) OR subscription <> :s',
            ExpressionAttributeValues: { ':s': subscription },
          }),
        ))
          ? topicId
          : undefined,
      ),
    );
    return written.filter((id): id is string => id !== undefined);
  }

  async setUnsubscribed(contact: Contact, unsubscribed: boolean, at: string): Promise<Contact | undefined> {
    // Only the same contact (an address deleted and created again has another id), and only a
    // change: of concurrent clicks, one writes.
    const attributes = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: contactKey(contact.email),
        UpdateExpression: 'SET unsubscribed = :u, updated_at = :at',
        ConditionExpression: 'id = :id AND unsubscribed <> :u',
        ExpressionAttributeValues: { ':u': unsubscribed, ':at': at, ':id': contact.id },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return attributes ? toContact(attributes) : undefined;
  }

  async createContact(contact: Contact, choices: readonly Choice[]): Promise<Contact | undefined> {
    // No transaction (the local DynamoDB has none, and none is needed): the id item and the
    // choices first, under the new contact's id, which nothing else names; then the contact's item,
    // on the condition that the address has none. Once the contact exists, so do they; a crash
    // before leaves items under an id no contact has, which no read reaches.
    const put = (Item: Record<string, unknown>) =>
      this.db.send(new PutCommand({ TableName: this.tableName, Item }));
    const choiceItems = choices.map(({ topicId, subscription }) =>
      choiceItem({ contact_id: contact.id, topic_id: topicId, subscription, updated_at: contact.created_at }),
    );
    await Promise.all([put(contactIdItem(contact)), ...choiceItems.map(put)]);
    const created = await writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: contactItem(contact),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    if (created) return contact;
    // The address has a contact (made meanwhile): these items name nobody; take them back.
    await Promise.all(
      [contactIdKey(contact.id), ...choices.map(({ topicId }) => choiceKey(contact.id, topicId))].map((Key) =>
        this.db.send(new DeleteCommand({ TableName: this.tableName, Key })),
      ),
    );
    return undefined;
  }
}
