import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Contact, Membership, Segment, TopicChoice } from '../../contacts/contact.js';
import { addressKey, isAddress } from '../../contacts/contact.js';
import type { AudienceReads } from '../../contacts/reads.js';
import {
  choiceKey,
  contactIdKey,
  contactKey,
  segmentKey,
  toChoice,
  toContact,
  toMembership,
  toProperty,
  topicKey,
  toSegment,
  toTopic,
} from './audience-items.js';
import { batchGetAll, queryPages } from './client.js';
import { keys } from './table.js';

type Item = Record<string, unknown>;

/** The audience's reads (contacts/reads.ts) on the single table (table.ts has the layout). */
export class DynamoAudienceReads implements AudienceReads {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private async get(key: Item, consistent = false): Promise<Item | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: consistent }),
    );
    return Item;
  }

  private async all(partition: string, prefix?: string, newestFirst = false): Promise<Item[]> {
    const found: Item[] = [];
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': partition, ...(prefix ? { ':prefix': prefix } : {}) },
      ScanIndexForward: !newestFirst,
      ConsistentRead: true,
    }))
      found.push(...page);
    return found;
  }

  async contactByAddress(address: string, consistent = false): Promise<Contact | undefined> {
    const item = await this.get(contactKey(address), consistent);
    return item ? toContact(item) : undefined;
  }

  async contactById(id: string, consistent = false): Promise<Contact | undefined> {
    const pointer = await this.get(contactIdKey(id), consistent);
    if (!pointer) return undefined;
    const contact = await this.contactByAddress(String(pointer.address), consistent);
    // An address changed between the two reads: the contact at the old address is another's, or none.
    return contact?.id === id ? contact : undefined;
  }

  contact(idOrEmail: string, consistent = false): Promise<Contact | undefined> {
    return isAddress(idOrEmail)
      ? this.contactByAddress(idOrEmail, consistent)
      : this.contactById(idOrEmail, consistent);
  }

  async contactsByAddresses(addresses: readonly string[]): Promise<Map<string, Contact>> {
    const unique = [...new Set(addresses.map(addressKey))];
    const items = await batchGetAll(
      this.db,
      this.tableName,
      unique.map((address) => contactKey(address)),
    );
    return new Map(items.map((item) => [String(item.address), toContact(item)]));
  }

  async choicesFor(topicId: string, contactIds: readonly string[]): Promise<Map<string, TopicChoice>> {
    const unique = [...new Set(contactIds)];
    const items = await batchGetAll(
      this.db,
      this.tableName,
      unique.map((id) => choiceKey(id, topicId)),
    );
    return new Map(items.map((item) => [String(item.contact_id), toChoice(item)]));
  }

  async choicesOf(contactId: string): Promise<TopicChoice[]> {
    return (await this.all(keys.contactOf(contactId), keys.choicePrefix)).map(toChoice);
  }

  async membershipsOf(contactId: string): Promise<Membership[]> {
    return (await this.all(keys.contactOf(contactId), keys.membershipPrefix)).map(toMembership);
  }

  async segment(id: string): Promise<Segment | undefined> {
    const item = await this.get(segmentKey(id), true);
    return item ? toSegment(item) : undefined;
  }

  async segments(ids: readonly string[]): Promise<Map<string, Segment>> {
    const unique = [...new Set(ids)];
    const items = await batchGetAll(
      this.db,
      this.tableName,
      unique.map((id) => segmentKey(id)),
    );
    return new Map(items.map((item) => [String(item.id), toSegment(item)]));
  }

  async topic(id: string) {
    const item = await this.get(topicKey(id), true);
    return item ? toTopic(item) : undefined;
  }

  async topics() {
    return (await this.all(keys.topics, undefined, true)).map(toTopic);
  }

  async properties() {
    return (await this.all(keys.contactProperties, undefined, true)).map(toProperty);
  }
}
