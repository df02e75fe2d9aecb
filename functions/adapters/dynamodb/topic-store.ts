import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Topic, TopicChoice } from '../../contacts/contact.js';
import type { PageQuery } from '../../shared/list.js';
import type { TopicStore } from '../../topics/ports.js';
import { choiceItem, contactIdKey, topicItem, topicKey, toTopic } from './audience-items.js';
import { attributesIf, newestFirstPage, pause, writeIf } from './client.js';
import { keys } from './table.js';

type Item = Record<string, unknown>;

/**
 * Topics (one partition, TOPICS, sorted by id: a UUIDv7, so newest last) and contacts' choices of
 * them (an item each, audience-items.ts). DynamoDB Local's stand-in (dynalite) has no transactions,
 * and none is needed: each write is one item, or idempotent puts of choices.
 */
export class DynamoTopicStore implements TopicStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(topic: Topic): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: topicItem(topic),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(id: string): Promise<Topic | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: topicKey(id), ConsistentRead: true }),
    );
    return Item ? toTopic(Item) : undefined;
  }

  async list(page: PageQuery): Promise<{ data: Topic[]; has_more: boolean }> {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.topics,
        prefix: keys.topic(''),
        sortKeyOf: (id) => keys.topic(id),
      },
      page,
    );
    return { data: items.map(toTopic), has_more };
  }

  replace(next: Topic, previous: Topic): Promise<boolean> {
    return writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: topicItem(next),
        ConditionExpression: 'updated_at = :previous',
        ExpressionAttributeValues: { ':previous': previous.updated_at },
      }),
    );
  }

  async remove(id: string): Promise<Topic | undefined> {
    const old = await attributesIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: topicKey(id),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_OLD',
      }),
    );
    return old ? toTopic(old) : undefined;
  }

  /**
   * The choices as puts, 25 to a BatchWriteItem (what DynamoDB leaves unprocessed retried), then a
   * read of the contact's id item: a contact deleted meanwhile answers false (its choices written
   * after its clean-up began are then left unread: nothing reads the choices of a contact that is gone).
   */
  async setChoices(contactId: string, choices: readonly TopicChoice[]): Promise<boolean> {
    const items = choices.map(choiceItem);
    const chunks: Item[][] = [];
    for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
    await Promise.all(chunks.map((chunk) => this.batchWrite(chunk)));
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: contactIdKey(contactId), ConsistentRead: true }),
    );
    return Item !== undefined;
  }

  private async batchWrite(items: Item[]): Promise<void> {
    let requests = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) {
        if (attempt > 5) throw new Error('DynamoDB did not accept the write after 5 retries');
        await pause(25 * 2 ** attempt);
      }
      const result = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
      );
      requests = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
    }
  }
}
