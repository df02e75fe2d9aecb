import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { ContactPropertyStore } from '../../contact-properties/ports.js';
import type { ContactProperty, PropertyValue } from '../../contacts/contact.js';
import type { PageQuery } from '../../shared/list.js';
import { propertyItem, propertyKey, propertyKeyItem, propertyKeyKey, toProperty } from './audience-items.js';
import { attributesIf, newestFirstPage, writeIf } from './client.js';
import { keys } from './table.js';

/**
 * Contact properties: one partition (CONTACTPROPS, sorted by id, a UUIDv7), and beside each an item
 * keyed by its key (CONTACTPROPKEY#<key>) naming its id, which makes keys unique. No transaction
 * (dynalite, the local DynamoDB, has none; nor is one needed): the key's item is put first and
 * removed last, so a crash between the two writes leaves at worst a key item naming a property
 * that does not exist, which the next create of that key takes over.
 */
export class DynamoContactPropertyStore implements ContactPropertyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private async read(key: Record<string, unknown>) {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    return Item;
  }

  async create(property: ContactProperty): Promise<boolean> {
    const claimed =
      (await this.putKey(property, 'attribute_not_exists(pk)')) || (await this.takeOverOrphan(property));
    if (!claimed) return false;
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: propertyItem(property),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  }

  private putKey(property: ContactProperty, condition: string, values?: Record<string, unknown>) {
    return writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: propertyKeyItem(property),
        ConditionExpression: condition,
        ...(values ? { ExpressionAttributeValues: values } : {}),
      }),
    );
  }

  /** The key's item names a property that is gone (a create or delete stopped half-way): it is taken over. */
  private async takeOverOrphan(property: ContactProperty): Promise<boolean> {
    const holder = await this.read(propertyKeyKey(property.key));
    if (!holder) return this.putKey(property, 'attribute_not_exists(pk)');
    if (await this.read(propertyKey(String(holder.id)))) return false;
    return this.putKey(property, 'id = :orphan', { ':orphan': holder.id });
  }

  async get(id: string): Promise<ContactProperty | undefined> {
    const item = await this.read(propertyKey(id));
    return item ? toProperty(item) : undefined;
  }

  async list(page: PageQuery): Promise<{ data: ContactProperty[]; has_more: boolean }> {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.contactProperties,
        prefix: keys.contactProperty(''),
        sortKeyOf: (id) => keys.contactProperty(id),
      },
      page,
    );
    return { data: items.map(toProperty), has_more };
  }

  async setFallback(id: string, value: PropertyValue | null): Promise<ContactProperty | undefined> {
    const item = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: propertyKey(id),
        UpdateExpression: 'SET fallback_value = :value',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':value': value },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return item ? toProperty(item) : undefined;
  }

  async remove(id: string): Promise<ContactProperty | undefined> {
    const old = await attributesIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: propertyKey(id),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_OLD',
      }),
    );
    if (!old) return undefined;
    const property = toProperty(old);
    // Only while the key still names this property (a create may have taken an orphan over).
    await writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: propertyKeyKey(property.key),
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': id },
      }),
    );
    return property;
  }
}
