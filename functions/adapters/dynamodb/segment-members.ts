import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Contact } from '../../contacts/contact.js';
import type { Page, SegmentMembers } from '../../segments/ports.js';
import type { PageQuery } from '../../shared/list.js';
import { contactIdKey, contactKey, toContact } from './audience-items.js';
import { batchGetAll, newestFirstMerged } from './client.js';
import { CONTACT_SHARDS, INDEXES, keys } from './table.js';

const TIME = INDEXES.emailsByTime;

/**
 * What every UUIDv7 starts with until the year 2527 (its first 4 bits are the top of a 48-bit
 * millisecond time): the listing's lower bound, as DynamoDB takes no empty string in a key condition.
 */
export const UUID_V7_PREFIX = '0';

/**
 * A segment's members, page by page, newest contact first, without a scan: its memberships' entries
 * in the time index (`SEGMENT#<id>#<shard>`, CONTACT_SHARDS partitions sorted by contact id) merged
 * as one list, read only as far as the page needs, then the page's contacts by id (their id items,
 * then their items, two BatchGetItems). A member whose contact is gone (deleted, its memberships
 * not yet cleaned up) is left out, so such a page may hold fewer than `limit`.
 */
export class DynamoSegmentMembers implements SegmentMembers {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async members(segmentId: string, page: PageQuery): Promise<Page<Contact>> {
    const { items, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        IndexName: TIME.name,
        partitionKey: TIME.partitionKey,
        sortKey: TIME.sortKey,
        partitions: Array.from({ length: CONTACT_SHARDS }, (_, shard) =>
          keys.segmentMembers(segmentId, shard),
        ),
        prefix: UUID_V7_PREFIX,
        sortKeyOf: (id) => id,
      },
      page,
    );
    const ids = items.map((item) => String(item[TIME.sortKey]));
    const pointers = await batchGetAll(
      this.db,
      this.tableName,
      ids.map((id) => contactIdKey(id)),
    );
    const addresses = new Map(pointers.map((item) => [String(item.id), String(item.address)]));
    const found = await batchGetAll(
      this.db,
      this.tableName,
      [...new Set(addresses.values())].map((address) => contactKey(address)),
    );
    const contacts = new Map(found.map((item) => [String(item.id), toContact(item)]));
    return { data: ids.flatMap((id) => contacts.get(id) ?? []), has_more };
  }
}
