import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SegmentMember, SegmentMemberPages } from '../../broadcasts/fan-out-ports.js';
import type { Contact } from '../../contacts/contact.js';
import type { ContactListing, ContactPage, ContactPageQuery } from '../../contacts/ports.js';
import { contactIdKey, contactKey, membershipKey, toContact } from './audience-items.js';
import { batchGetAll, newestFirstMerged } from './client.js';
import { CONTACT_SHARDS, INDEXES, keys } from './table.js';

type Item = Record<string, unknown>;

const TIME = INDEXES.emailsByTime;

/**
 * Every sort key of these listings is a contact id, a UUIDv7, whose first hex digit is the top of
 * its 48-bit millisecond time: 0 until the year 2527. The listing's range starts there (DynamoDB
 * refuses an empty string in a key condition).
 */
const UUID_V7_PREFIX = '0';

const shards = (partition: (shard: number) => string) =>
  Array.from({ length: CONTACT_SHARDS }, (_, shard) => partition(shard));

/**
 * Contacts listed newest first without a scan (contacts/ports.ts), through the keys-only time
 * index: all contacts under CONTACTS#<shard>, a segment's members under SEGMENT#<id>#<shard>, each
 * CONTACT_SHARDS partitions merged in id order (client.ts newestFirstMerged reads each only as
 * far as the page needs: a page of a million-member segment reads about `limit` + 2 × 16 entries).
 * Then the contacts themselves, batched: all contacts' entries are the contact items' own (their
 * keys name the address); a membership's names the contact's id, so its id items are read first.
 * A member whose contact was deleted (its clean-up still to come) is left out of the page.
 * Segments (their GET /v1/segments/{id}/contacts) list members through `segmentMembers` too.
 */
export class DynamoContactListing implements ContactListing, SegmentMemberPages {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The layout's time index (table-layout.ts): its name differs at upgrade step 1, and roles are granted that one. */
    private readonly timeIndex: string = TIME.name,
  ) {}

  private page(partitions: string[], page: ContactPageQuery) {
    return newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        IndexName: this.timeIndex,
        partitionKey: TIME.partitionKey,
        sortKey: TIME.sortKey,
        partitions,
        prefix: UUID_V7_PREFIX,
        sortKeyOf: (id) => id,
      },
      { ...page, offset: 0 },
    );
  }

  /** The contacts of these contact items' keys, in the order given (those gone left out). */
  private async contactsAt(keysInOrder: Item[]): Promise<Contact[]> {
    // BatchGetItem refuses a key twice: each address once, in its first place.
    const unique = [...new Map(keysInOrder.map((key) => [String(key.pk), key])).values()];
    const items = await batchGetAll(this.db, this.tableName, unique);
    const byPk = new Map(items.map((item) => [String(item.pk), toContact(item)]));
    return unique.flatMap((key) => {
      const contact = byPk.get(String(key.pk));
      return contact ? [contact] : [];
    });
  }

  async contacts(page: ContactPageQuery): Promise<ContactPage> {
    const { items, has_more } = await this.page(shards(keys.contacts), page);
    const data = await this.contactsAt(items.map((item) => ({ pk: item.pk, sk: item.sk })));
    return { data, has_more };
  }

  async segmentMembers(segmentId: string, page: ContactPageQuery): Promise<ContactPage> {
    const { items, has_more } = await this.page(
      shards((shard) => keys.segmentMembers(segmentId, shard)),
      page,
    );
    const ids = items.map((item) => String(item[TIME.sortKey]));
    const pointers = await batchGetAll(
      this.db,
      this.tableName,
      ids.map((id) => contactIdKey(id)),
    );
    const addressOf = new Map(pointers.map((p) => [String(p.id), String(p.address)]));
    const contacts = await this.contactsAt(
      ids.flatMap((id) => {
        const address = addressOf.get(id);
        return address ? [contactKey(address)] : [];
      }),
    );
    // A contact at that address with another id is a later contact of the same address, not the member.
    return { data: contacts.filter((c) => ids.includes(c.id)), has_more };
  }

  /**
   * A broadcast's fan-out page (broadcasts/fan-out.ts): the segment's members after `after`, OLDEST
   * contact id first (the merge read from the cursor upwards), each with its membership's
   * `created_at` (the index is keys only: the memberships and the id items are read in one batch,
   * then the contacts), so members who joined after the send began can be left out.
   */
  async membersAfter(
    segmentId: string,
    after: string | null,
    limit: number,
  ): Promise<{ members: SegmentMember[]; last: string | null; has_more: boolean }> {
    // `before` reads upwards from the cursor (and answers newest first: turned back here).
    const { items, has_more } = await this.page(
      shards((shard) => keys.segmentMembers(segmentId, shard)),
      { limit, before: after ?? UUID_V7_PREFIX },
    );
    const ids = items.map((item) => String(item[TIME.sortKey])).reverse();
    const read = await batchGetAll(this.db, this.tableName, [
      ...ids.map((id) => membershipKey(id, segmentId)),
      ...ids.map((id) => contactIdKey(id)),
    ]);
    const joinedAt = new Map<string, string>();
    const addressOf = new Map<string, string>();
    for (const item of read)
      if (String(item.pk).startsWith(keys.contactOf('')))
        joinedAt.set(String(item.contact_id), String(item.created_at));
      else addressOf.set(String(item.id), String(item.address));
    const contacts = await this.contactsAt(
      ids.flatMap((id) => {
        const address = addressOf.get(id);
        return address ? [contactKey(address)] : [];
      }),
    );
    const byId = new Map(contacts.map((c) => [c.id, c]));
    const members = ids.flatMap((id) => {
      const joined = joinedAt.get(id);
      // Its membership gone since the index was read: no longer a member.
      if (joined === undefined) return [];
      const contact = byId.get(id);
      return [{ contact_id: id, joined_at: joined, ...(contact ? { contact } : {}) }];
    });
    return { members, last: ids[ids.length - 1] ?? after, has_more };
  }
}

/** The factory a listing function names for its wiring (wiring/contacts.ts), so only those bundle this. */
export const contactListing = (t: {
  db: DynamoDBDocumentClient;
  name: string;
  /** The table's layout (table-layout.ts): the time index by the name the roles are granted. */
  layout?: { timeIndex: string };
}) => new DynamoContactListing(t.db, t.name, t.layout?.timeIndex);
