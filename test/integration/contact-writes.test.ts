/**
 * The contacts' writes and listings on dynalite (issue 40), where the handlers' tests cannot reach:
 * a create that stops before its commit point leaves nothing anyone reads, a create that meets an
 * address taken meanwhile takes back what it wrote, an address change that dies leaves the
 * contact at one address (one transaction), and a page of a large segment reads a page's worth of index entries, not the segment.
 */
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contactIdItem,
  contactItem,
  membershipItem,
  segmentItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoContactListing } from '../../functions/adapters/dynamodb/contact-listing.js';
import { DynamoContactWrites } from '../../functions/adapters/dynamodb/contact-writes.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { newUuid } from '../../functions/shared/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let reads: DynamoAudienceReads;
const at = '2026-11-28T12:00:00.000Z';

beforeAll(async () => {
  table = await startTestTable();
  reads = new DynamoAudienceReads(table.db, table.tableName);
});
afterAll(() => table.stop());

let unique = 0;
const contact = (over: Partial<Contact> = {}): Contact => ({
  id: newUuid(),
  email: `c${++unique}@example.com`,
  first_name: null,
  last_name: null,
  unsubscribed: false,
  props: {},
  created_at: at,
  updated_at: at,
  ...over,
});

/** The table's client, with a crash injected at the first command `dies` picks (it never reaches the table). */
function dyingAt(dies: (command: unknown) => boolean): DynamoDBDocumentClient {
  let died = false;
  return {
    send: (command: unknown) => {
      if (!died && dies(command)) {
        died = true;
        return Promise.reject(new Error('the function died here'));
      }
      return table.db.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
}

const isContactPut = (command: unknown) =>
  command instanceof PutCommand && command.input.Item?.sk === 'CONTACT';

describe('a create', () => {
  it('that stops before the contact item leaves its memberships, choices and id item unread', async () => {
    const segment = { id: newUuid(), name: 'S', created_at: at };
    await table.db.send(new PutCommand({ TableName: table.tableName, Item: segmentItem(segment) }));
    const lost = contact();
    const writes = new DynamoContactWrites(dyingAt(isContactPut), table.tableName);
    await expect(writes.create({ contact: lost, segmentIds: [segment.id], topics: [] })).rejects.toThrow(
      'died',
    );
    expect(await reads.contactById(lost.id, true)).toBeUndefined();
    expect(await reads.contactByAddress(lost.email, true)).toBeUndefined();
    const listing = new DynamoContactListing(table.db, table.tableName);
    expect((await listing.segmentMembers(segment.id, { limit: 10 })).data).toEqual([]);
    // The address is free: a create of it succeeds, as a new contact.
    const again = contact({ email: lost.email });
    const healthy = new DynamoContactWrites(table.db, table.tableName);
    expect(await healthy.create({ contact: again, segmentIds: [segment.id], topics: [] })).toBe(true);
    expect((await listing.segmentMembers(segment.id, { limit: 10 })).data.map((c) => c.id)).toEqual([
      again.id,
    ]);
  });

  it('that meets the address taken meanwhile takes back what it wrote', async () => {
    const writes = new DynamoContactWrites(table.db, table.tableName);
    const first = contact();
    expect(await writes.create({ contact: first, segmentIds: [], topics: [] })).toBe(true);
    const second = contact({ email: first.email.toUpperCase() });
    const topic = newUuid();
    expect(
      await writes.create({
        contact: second,
        segmentIds: [newUuid()],
        topics: [{ id: topic, subscription: 'opt_in' }],
      }),
    ).toBe(false);
    expect(await reads.membershipsOf(second.id)).toEqual([]);
    expect(await reads.choicesOf(second.id)).toEqual([]);
    expect(await reads.contactById(second.id, true)).toBeUndefined();
    expect((await reads.contactByAddress(first.email, true))?.id).toBe(first.id);
  });
});

describe('an address change', () => {
  it('that dies at any of its writes leaves the contact at one address, never at both', async () => {
    const writes = new DynamoContactWrites(table.db, table.tableName);
    for (const dieAt of [1, 2, 3, 4]) {
      const before = contact();
      await writes.create({ contact: before, segmentIds: [], topics: [] });
      const after = {
        ...before,
        email: `moved${++unique}@example.com`,
        updated_at: '2026-11-28T12:00:01.000Z',
      };
      let sent = 0;
      const dying = new DynamoContactWrites(
        dyingAt(() => ++sent === dieAt),
        table.tableName,
      );
      const outcome = await dying.update(before, after).catch((error: Error) => error.message);
      const [atOld, atNew, byId] = await Promise.all([
        reads.contactByAddress(before.email, true),
        reads.contactByAddress(after.email, true),
        reads.contactById(before.id, true),
      ]);
      const where = `dying at write ${dieAt} (${String(outcome)})`;
      expect([atOld, atNew].filter(Boolean), where).toHaveLength(1);
      expect(byId?.email, where).toBe((atOld ?? atNew)?.email);
    }
  });

  it('answers changed when another write came first, and taken when the new address has another contact', async () => {
    const writes = new DynamoContactWrites(table.db, table.tableName);
    const a = contact();
    const b = contact();
    await writes.create({ contact: a, segmentIds: [], topics: [] });
    await writes.create({ contact: b, segmentIds: [], topics: [] });
    const later = { ...a, first_name: 'X', updated_at: '2026-11-28T12:00:05.000Z' };
    expect(await writes.update(a, later)).toBe('updated');
    expect(await writes.update(a, { ...a, last_name: 'Y', updated_at: '2026-11-28T12:00:06.000Z' })).toBe(
      'changed',
    );
    expect(
      await writes.update(later, { ...later, email: b.email, updated_at: '2026-11-28T12:00:07.000Z' }),
    ).toBe('taken');
    expect((await reads.contactByAddress(b.email, true))?.id).toBe(b.id);
    expect((await reads.contactByAddress(a.email, true))?.id).toBe(a.id);
  });
});

describe('a large segment', () => {
  it('is paged reading a page’s worth of index entries, never the whole segment', async () => {
    const segment = newUuid();
    const members = Array.from({ length: 400 }, () => contact());
    const items = members.flatMap((c) => [
      contactItem(c),
      contactIdItem(c),
      membershipItem({ contact_id: c.id, segment_id: segment, created_at: at }),
    ]);
    for (let i = 0; i < items.length; i += 25)
      await table.db.send(
        new BatchWriteCommand({
          RequestItems: {
            [table.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
          },
        }),
      );
    let read = 0;
    const counting = {
      send: async (command: unknown) => {
        const answer = await table.db.send(command as never);
        if (command instanceof QueryCommand) read += (answer as { Items?: unknown[] }).Items?.length ?? 0;
        return answer;
      },
    } as unknown as DynamoDBDocumentClient;
    const listing = new DynamoContactListing(counting, table.tableName);
    const newest = members
      .map((c) => c.id)
      .sort()
      .reverse();
    const first = await listing.segmentMembers(segment, { limit: 20 });
    expect(first.data.map((c) => c.id)).toEqual(newest.slice(0, 20));
    expect(first.has_more).toBe(true);
    expect(read).toBeLessThan(100);
    read = 0;
    const next = await listing.segmentMembers(segment, { limit: 20, after: newest[19] as string });
    expect(next.data.map((c) => c.id)).toEqual(newest.slice(20, 40));
    expect(read).toBeLessThan(100);
  });
});
