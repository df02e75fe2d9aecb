/**
 * Segments (issue 40): segments, the audiences mapped onto them, a contact's segments and a
 * segment's contacts, through the handlers invoked with API Gateway v2 events, the table on
 * dynalite. Contacts are seeded through audience-items.ts (the contacts' own routes are another
 * part's). Answers are checked against Resend's document (test/fixtures/resend-openapi.json).
 */
import { BatchWriteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  contactIdItem,
  contactItem,
  membershipItem,
  membershipKey,
  segmentKey,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { contactListing } from '../../functions/adapters/dynamodb/contact-listing.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoSegmentStore } from '../../functions/adapters/dynamodb/segment-store.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import type { AudienceCleanup, CleanupJob } from '../../functions/contacts/cleanup-jobs.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { makeHandler as makeAddContactSegment } from '../../functions/handlers/add-contact-segment.js';
import { makeHandler as makeCreateAudience } from '../../functions/handlers/create-audience.js';
import { makeHandler as makeCreateSegment } from '../../functions/handlers/create-segment.js';
import { makeHandler as makeDeleteAudience } from '../../functions/handlers/delete-audience.js';
import { makeHandler as makeDeleteSegment } from '../../functions/handlers/delete-segment.js';
import { makeHandler as makeGetAudience } from '../../functions/handlers/get-audience.js';
import { makeHandler as makeGetSegment } from '../../functions/handlers/get-segment.js';
import { makeHandler as makeListAudiences } from '../../functions/handlers/list-audiences.js';
import { makeHandler as makeListContactSegments } from '../../functions/handlers/list-contact-segments.js';
import { makeHandler as makeListSegmentContacts } from '../../functions/handlers/list-segment-contacts.js';
import { makeHandler as makeListSegments } from '../../functions/handlers/list-segments.js';
import { makeHandler as makeRemoveContactSegment } from '../../functions/handlers/remove-contact-segment.js';
import { makeHandler as makeUpdateSegment } from '../../functions/handlers/update-segment.js';
import { newUuid } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape, resendAnswer } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let token: string;
let sendingToken: string;
const jobs: CleanupJob[] = [];
const cleanup: AudienceCleanup = { enqueue: async (job) => void jobs.push(job) };
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
// biome-ignore lint/suspicious/noExplicitAny: one set of dependencies serves every handler's makeHandler
let deps: any;

beforeAll(async () => {
  table = await startTestTable();
  const repos = createRepositories(table.tableName, table.db);
  token = await fullAccessKey(repos.apiKeys);
  const sending = generateApiKey('sending', 'sending_access', new Date());
  await repos.apiKeys.put(sending.key);
  sendingToken = sending.token;
  deps = {
    apiKeys: repos.apiKeys,
    segments: new DynamoSegmentStore(table.db, table.tableName),
    audience: new DynamoAudienceReads(table.db, table.tableName),
    members: {
      members: (id: string, page: { limit: number; after?: string; before?: string }) =>
        contactListing({ db: table.db, name: table.tableName }).segmentMembers(id, page),
    },
    cleanup,
    clock: systemClock,
    log,
    rateLimit: { perSecond: 10_000 },
  };
});
afterAll(() => table.stop());
beforeEach(() => void jobs.splice(0));

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
type Invoke = (event: ReturnType<typeof httpEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;

/**
 * One request to a route as API Gateway sends it: the path as the client wrote it (an address with
 * `+` unencoded, as the SDK puts it), the path parameters as API Gateway gives them. Every 2xx
 * answer of a route Resend has is checked against Resend's schema.
 */
async function request(
  // biome-ignore lint/suspicious/noExplicitAny: each handler takes its own dependencies, all in `deps`
  make: (d: any) => Invoke,
  method: string,
  route: string,
  options: {
    params?: Record<string, string>;
    body?: unknown;
    query?: Record<string, string>;
    token?: string;
  } = {},
): Promise<Answer> {
  const path = route.replace(/\{(\w+)\}/g, (_, name: string) => options.params?.[name] ?? '');
  const response = (await make(deps)(
    httpEvent({
      method,
      path,
      routeKey: `${method} ${route}`,
      token: options.token ?? token,
      body: options.body,
      query: options.query,
      pathParameters: options.params,
    }),
    context(),
  )) as APIGatewayProxyStructuredResultV2;
  const answer = { status: response.statusCode, body: JSON.parse(String(response.body ?? 'null')) };
  const resend = resendAnswer(method, route);
  if (resend && answer.status !== undefined && answer.status < 300) {
    expect(String(answer.status)).toBe(resend.status);
    expect(resend.validate(answer.body), JSON.stringify(answer.body)).toEqual([]);
  }
  return answer;
}

/** A contact as the contacts' routes store it (audience-items.ts). */
async function seedContact(email: string, over: Partial<Contact> = {}): Promise<Contact> {
  const now = new Date().toISOString();
  const contact: Contact = {
    id: newUuid(),
    email,
    first_name: null,
    last_name: null,
    unsubscribed: false,
    props: {},
    created_at: now,
    updated_at: now,
    ...over,
  };
  await table.db.send(new PutCommand({ TableName: table.tableName, Item: contactItem(contact) }));
  await table.db.send(new PutCommand({ TableName: table.tableName, Item: contactIdItem(contact) }));
  return contact;
}

const createSegment = async (name: string) =>
  (await request(makeCreateSegment, 'POST', '/v1/segments', { body: { name } })).body.id as string;

const get = (key: Record<string, unknown>) =>
  table.db.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }));

describe('segments', () => {
  it('creates, lists, reads, renames and deletes a segment in Resend’s shapes', async () => {
    const created = await request(makeCreateSegment, 'POST', '/v1/segments', {
      body: { name: 'Registered' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ object: 'segment', id: expect.any(String), name: 'Registered' });
    const id = created.body.id as string;
    // A UUIDv7, as the shared ids rule says.
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const got = await request(makeGetSegment, 'GET', '/v1/segments/{id}', { params: { id } });
    expect(got.body).toEqual({ object: 'segment', id, name: 'Registered', created_at: expect.any(String) });
    expect(new Date(got.body.created_at).toISOString()).toBe(got.body.created_at);

    const renamed = await request(makeUpdateSegment, 'PATCH', '/v1/segments/{id}', {
      params: { id },
      body: { name: 'Customers' },
    });
    expect(renamed.body).toMatchObject({ object: 'segment', id, name: 'Customers' });

    const listed = await request(makeListSegments, 'GET', '/v1/segments');
    expect(listed.body.object).toBe('list');
    expect(listed.body.data[0]).toEqual({ id, name: 'Customers', created_at: got.body.created_at });

    const deleted = await request(makeDeleteSegment, 'DELETE', '/v1/segments/{id}', { params: { id } });
    expect(deleted.body).toEqual({ object: 'segment', id, deleted: true });
    expect(jobs).toEqual([{ kind: 'segment', segment_id: id }]);
    expect((await request(makeGetSegment, 'GET', '/v1/segments/{id}', { params: { id } })).status).toBe(404);
    expect((await request(makeDeleteSegment, 'DELETE', '/v1/segments/{id}', { params: { id } })).status).toBe(
      404,
    );
    expect(
      (
        await request(makeUpdateSegment, 'PATCH', '/v1/segments/{id}', {
          params: { id },
          body: { name: 'x' },
        })
      ).status,
    ).toBe(404);
    // The 404 delete queued a job too (queued before the delete): for no segment, it deletes nothing.
    expect(jobs).toEqual([
      { kind: 'segment', segment_id: id },
      { kind: 'segment', segment_id: id },
    ]);
  });

  it('keeps the segment when the clean-up queue refuses (500), so a retry deletes it and queues its clean-up', async () => {
    const id = (await request(makeCreateSegment, 'POST', '/v1/segments', { body: { name: 'Kept' } })).body
      .id as string;
    const enqueue = cleanup.enqueue;
    cleanup.enqueue = async () => {
      throw new Error('SQS refused the message');
    };
    try {
      const failed = await request(makeDeleteSegment, 'DELETE', '/v1/segments/{id}', { params: { id } });
      expect(failed.status).toBe(500);
    } finally {
      cleanup.enqueue = enqueue;
    }
    expect((await request(makeGetSegment, 'GET', '/v1/segments/{id}', { params: { id } })).status).toBe(200);
    const retried = await request(makeDeleteSegment, 'DELETE', '/v1/segments/{id}', { params: { id } });
    expect(retried.status).toBe(200);
    expect(jobs).toEqual([{ kind: 'segment', segment_id: id }]);
  });

  it('refuses a nameless segment, a filter, and a rename to nothing, naming the field', async () => {
    for (const body of [{}, { name: '  ' }, { name: 'x', filter: {} }]) {
      const answer = await request(makeCreateSegment, 'POST', '/v1/segments', { body });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/name|filter/);
    }
    // Resend's deprecated audience_id is taken (and ignored).
    expect(
      (await request(makeCreateSegment, 'POST', '/v1/segments', { body: { name: 'y', audience_id: 'a' } }))
        .status,
    ).toBe(201);
  });

  it('lists segments newest first, page by page with Resend’s cursors', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createSegment(`paged ${i}`));
    const first = await request(makeListSegments, 'GET', '/v1/segments', { query: { limit: '2' } });
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual([ids[4], ids[3]]);
    const second = await request(makeListSegments, 'GET', '/v1/segments', {
      query: { limit: '2', after: ids[3] as string },
    });
    expect(second.body.data.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const back = await request(makeListSegments, 'GET', '/v1/segments', {
      query: { limit: '2', before: ids[2] as string },
    });
    expect(back.body.data.map((s: { id: string }) => s.id)).toEqual([ids[4], ids[3]]);
    const bad = await request(makeListSegments, 'GET', '/v1/segments', { query: { after: 'seg_1' } });
    expect(bad.status).toBe(400);
  });

  it('needs a full-access key on every segment route', async () => {
    const id = await createSegment('guarded');
    for (const [make, method, route] of [
      [makeCreateSegment, 'POST', '/v1/segments'],
      [makeListSegments, 'GET', '/v1/segments'],
      [makeGetSegment, 'GET', '/v1/segments/{id}'],
      [makeListSegmentContacts, 'GET', '/v1/segments/{id}/contacts'],
      [makeDeleteAudience, 'DELETE', '/v1/audiences/{id}'],
      [makeAddContactSegment, 'POST', '/v1/contacts/{id}/segments/{segment_id}'],
    ] as const) {
      const answer = await request(make, method, route, {
        params: { id, segment_id: id },
        body: { name: 'x' },
        token: sendingToken,
      });
      expect(answer.status, route).toBe(403);
    }
  });
});

describe('audiences (Resend’s older name for segments)', () => {
  it('creates, lists, reads and deletes segments as audiences', async () => {
    const created = await request(makeCreateAudience, 'POST', '/v1/audiences', {
      body: { name: 'Newsletter' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ object: 'audience', id: expect.any(String), name: 'Newsletter' });
    const id = created.body.id as string;
    // The same item: a segment.
    const asSegment = await request(makeGetSegment, 'GET', '/v1/segments/{id}', { params: { id } });
    expect(asSegment.body.name).toBe('Newsletter');
    const got = await request(makeGetAudience, 'GET', '/v1/audiences/{id}', { params: { id } });
    expect(got.body).toEqual({
      object: 'audience',
      id,
      name: 'Newsletter',
      created_at: asSegment.body.created_at,
    });
    const listed = await request(makeListAudiences, 'GET', '/v1/audiences');
    expect(listed.body.data[0]).toEqual({ id, name: 'Newsletter', created_at: got.body.created_at });
    const deleted = await request(makeDeleteAudience, 'DELETE', '/v1/audiences/{id}', { params: { id } });
    expect(deleted.body).toEqual({ object: 'audience', id, deleted: true });
    expect(jobs).toEqual([{ kind: 'segment', segment_id: id }]);
    expect((await request(makeGetAudience, 'GET', '/v1/audiences/{id}', { params: { id } })).status).toBe(
      404,
    );
  });
});

describe('membership', () => {
  it('adds a contact by its address (with +, in any case) or id, lists its segments, and takes it out', async () => {
    const contact = await seedContact('Ana+News@Example.com');
    const news = await createSegment('news');
    const vip = await createSegment('vip');
    // The SDK puts the address in the path unencoded: API Gateway's parameter keeps the `+`.
    const added = await request(makeAddContactSegment, 'POST', '/v1/contacts/{id}/segments/{segment_id}', {
      params: { id: 'ana+news@EXAMPLE.com', segment_id: news },
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ object: 'contact_segment', contact_id: contact.id, segment_id: news });
    await request(makeAddContactSegment, 'POST', '/v1/contacts/{id}/segments/{segment_id}', {
      params: { id: contact.id, segment_id: vip },
    });
    const firstAdded = (await get(membershipKey(contact.id, news))).Item?.created_at;
    // Again: no change (the membership keeps when it was made).
    const again = await request(makeAddContactSegment, 'POST', '/v1/contacts/{id}/segments/{segment_id}', {
      params: { id: contact.id, segment_id: news },
    });
    expect(again.status).toBe(200);
    expect((await get(membershipKey(contact.id, news))).Item?.created_at).toBe(firstAdded);

    const listed = await request(makeListContactSegments, 'GET', '/v1/contacts/{id}/segments', {
      params: { id: 'ANA+news@example.com' },
    });
    expect(listed.body).toEqual({
      object: 'list',
      has_more: false,
      data: [
        { id: vip, name: 'vip', created_at: expect.any(String) },
        { id: news, name: 'news', created_at: firstAdded },
      ],
    });
    const paged = await request(makeListContactSegments, 'GET', '/v1/contacts/{id}/segments', {
      params: { id: contact.id },
      query: { limit: '1', after: vip },
    });
    expect(paged.body.data.map((s: { id: string }) => s.id)).toEqual([news]);

    const removed = await request(
      makeRemoveContactSegment,
      'DELETE',
      '/v1/contacts/{id}/segments/{segment_id}',
      {
        params: { id: 'ana+news@example.com', segment_id: news },
      },
    );
    expect(removed.body).toEqual({
      object: 'contact_segment',
      contact_id: contact.id,
      segment_id: news,
      deleted: true,
    });
    expect((await get(membershipKey(contact.id, news))).Item).toBeUndefined();
    const gone = await request(
      makeRemoveContactSegment,
      'DELETE',
      '/v1/contacts/{id}/segments/{segment_id}',
      {
        params: { id: contact.id, segment_id: news },
      },
    );
    expect(gone.status).toBe(404);
  });

  it('answers 404 for a contact or a segment that does not exist, and leaves out deleted segments', async () => {
    const contact = await seedContact('bo@example.com');
    const segment = await createSegment('short-lived');
    const missing = newUuid();
    for (const params of [
      { id: 'nobody@example.com', segment_id: segment },
      { id: missing, segment_id: segment },
      { id: contact.id, segment_id: missing },
    ]) {
      const answer = await request(makeAddContactSegment, 'POST', '/v1/contacts/{id}/segments/{segment_id}', {
        params,
      });
      expect(answer.status).toBe(404);
      expect(answer.body.name).toBe('not_found');
    }
    expect(
      (
        await request(makeListContactSegments, 'GET', '/v1/contacts/{id}/segments', {
          params: { id: missing },
        })
      ).status,
    ).toBe(404);
    await request(makeAddContactSegment, 'POST', '/v1/contacts/{id}/segments/{segment_id}', {
      params: { id: contact.id, segment_id: segment },
    });
    await request(makeDeleteSegment, 'DELETE', '/v1/segments/{id}', { params: { id: segment } });
    // The membership waits for the clean-up; the contact's segments already leave it out, and the contact stays.
    expect((await get(membershipKey(contact.id, segment))).Item).toBeDefined();
    const listed = await request(makeListContactSegments, 'GET', '/v1/contacts/{id}/segments', {
      params: { id: contact.id },
    });
    expect(listed.body.data).toEqual([]);
    expect((await get(segmentKey(segment))).Item).toBeUndefined();
    expect(await deps.audience.contactById(contact.id, true)).toMatchObject({ email: 'bo@example.com' });
  });
});

describe("a segment's contacts", () => {
  it('lists every member once, newest first, page by page over the shards, and no one else', async () => {
    const segment = await createSegment('big');
    const other = await createSegment('other');
    const members: Contact[] = [];
    for (let i = 0; i < 45; i++)
      members.push(await seedContact(`m${i}@example.com`, i % 3 === 0 ? { first_name: `M${i}` } : {}));
    const outsider = await seedContact('outsider@example.com');
    const now = new Date().toISOString();
    const memberships = [
      ...members.map((c) => membershipItem({ contact_id: c.id, segment_id: segment, created_at: now })),
      membershipItem({ contact_id: outsider.id, segment_id: other, created_at: now }),
    ];
    for (let i = 0; i < memberships.length; i += 25)
      await table.db.send(
        new BatchWriteCommand({
          RequestItems: {
            [table.tableName]: memberships.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
          },
        }),
      );
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const answer = await request(makeListSegmentContacts, 'GET', '/v1/segments/{id}/contacts', {
        params: { id: segment },
        query: { limit: '20', ...(after ? { after } : {}) },
      });
      expect(answer.status).toBe(200);
      // Resend's document has no such path: its answer is the contacts' list, as the SDK reads it.
      expectResendShape(answer.body, 'ListContactsResponseSuccess');
      pages += 1;
      seen.push(...answer.body.data.map((c: { id: string }) => c.id));
      if (!answer.body.has_more) break;
      after = seen.at(-1);
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(members.map((c) => c.id).reverse());
    const first = await request(makeListSegmentContacts, 'GET', '/v1/segments/{id}/contacts', {
      params: { id: segment },
      query: { limit: '1' },
    });
    const newest = members.at(-1) as Contact;
    expect(first.body.data).toEqual([
      { id: newest.id, email: newest.email, created_at: newest.created_at, unsubscribed: false },
    ]);
    const named = members[42] as Contact;
    const page = await request(makeListSegmentContacts, 'GET', '/v1/segments/{id}/contacts', {
      params: { id: segment },
      query: { limit: '1', after: (members[43] as Contact).id },
    });
    expect(page.body.data[0]).toMatchObject({ id: named.id, first_name: 'M42' });
    expect(
      (
        await request(makeListSegmentContacts, 'GET', '/v1/segments/{id}/contacts', {
          params: { id: newUuid() },
        })
      ).status,
    ).toBe(404);
  });
});
