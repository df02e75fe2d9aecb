import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Membership, Segment } from '../../contacts/contact.js';
import type { Page, SegmentStore } from '../../segments/ports.js';
import type { PageQuery } from '../../shared/list.js';
import {
  membershipItem,
  membershipKey,
  segmentItem,
  segmentKey,
  toMembership,
  toSegment,
} from './audience-items.js';
import { attributesIf, isConditionFailure, newestFirstPage } from './client.js';
import { keys, TABLE_KEYS } from './table.js';

const EXISTS = 'attribute_exists(pk)';

/**
 * Segments (one partition, `SEGMENTS`, sorted by their UUIDv7 ids) and their memberships (items of
 * their own in the contact's partition, listed under the segment's in the time index), on the single
 * table (table.ts has the layout; audience-items.ts builds and parses every item).
 */
export class DynamoSegmentStore implements SegmentStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(segment: Segment): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: segmentItem(segment),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async list(page: PageQuery): Promise<Page<Segment>> {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: TABLE_KEYS.partitionKey,
        sortKey: TABLE_KEYS.sortKey,
        partition: keys.segments,
        prefix: keys.segment(''),
        sortKeyOf: keys.segment,
      },
      page,
    );
    return { data: items.map(toSegment), has_more };
  }

  async rename(id: string, name: string): Promise<Segment | undefined> {
    const attributes = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: segmentKey(id),
        UpdateExpression: 'SET #name = :name',
        ConditionExpression: EXISTS,
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':name': name },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return attributes ? toSegment(attributes) : undefined;
  }

  async delete(id: string): Promise<Segment | undefined> {
    const attributes = await attributesIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: segmentKey(id),
        ConditionExpression: EXISTS,
        ReturnValues: 'ALL_OLD',
      }),
    );
    return attributes ? toSegment(attributes) : undefined;
  }

  /** A conditional put: one already there keeps its `created_at` (read back, strongly). */
  async addMember(membership: Membership): Promise<Membership> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: membershipItem(membership),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return membership;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: membershipKey(membership.contact_id, membership.segment_id),
          ConsistentRead: true,
        }),
      );
      return Item ? toMembership(Item) : membership;
    }
  }

  async removeMember(contactId: string, segmentId: string): Promise<boolean> {
    const attributes = await attributesIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: membershipKey(contactId, segmentId),
        ConditionExpression: EXISTS,
      }),
    );
    return attributes !== null;
  }
}
