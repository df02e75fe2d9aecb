/**
 * Contacts (issue 40): Resend's contacts resource and the audience-scoped routes SDK 6.38 calls,
 * through the handlers invoked with API Gateway v2 events, the table on dynalite. Answers are
 * checked against Resend's document (test/fixtures/resend-openapi.json). Segments, topics and
 * properties are seeded as their items (audience-items.ts), as their own routes would write them.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  propertyItem,
  propertyKeyItem,
  segmentItem,
  topicItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoContactListing } from '../../functions/adapters/dynamodb/contact-listing.js';
import { DynamoContactWrites } from '../../functions/adapters/dynamodb/contact-writes.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import type { CleanupJob } from '../../functions/contacts/cleanup-jobs.js';
import type { ContactProperty, Segment, Topic } from '../../functions/contacts/contact.js';
import type { ContactDeps } from '../../functions/contacts/contacts.js';
import { makeHandler as makeCreateInAudience } from '../../functions/handlers/create-audience-contact.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-contact.js';
import { makeHandler as makeDeleteInAudience } from '../../functions/handlers/delete-audience-contact.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-contact.js';
import { makeHandler as makeGetInAudience } from '../../functions/handlers/get-audience-contact.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-contact.js';
import { makeHandler as makeListInAudience } from '../../functions/handlers/list-audience-contacts.js';
import { makeHandler as makeList } from '../../functions/handlers/list-contacts.js';
import { makeHandler as makeUpdateInAudience } from '../../functions/handlers/update-audience-contact.js';
import { makeHandler as makeUpdate } from '../../functions/handlers/update-contact.js';
import { matchPath } from '../../functions/routes.js';
import { newUuid } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import type { WebhookEvent } from '../../functions/webhooks/model.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let token: string;
let reads: DynamoAudienceReads;
let jobs: CleanupJob[];
let queueRefuses = false;
let raised: WebhookEvent[];
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const at = new Date().toISOString();

const put = (Item: Record<string, unknown>) =>
  table.db.send(new PutCommand({ TableName: table.tableName, Item }));

async function seedSegment(name = 'Newsletter'): Promise<Segment> {
  const segment = { id: newUuid(), name, created_at: at };
  await put(segmentItem(segment));
  return segment;
}

async function seedTopic(default_subscription: Topic['default_subscription'] = 'opt_in'): Promise<Topic> {
  const topic: Topic = {
    id: newUuid(),
    name: 'Product news',
    description: null,
    default_subscription,
    visibility: 'public',
    created_at: at,
    updated_at: at,
  };
  await put(topicItem(topic));
  return topic;
}

async function seedProperty(key: string, type: ContactProperty['type']): Promise<ContactProperty> {
  const property: ContactProperty = { id: newUuid(), key, type, fallback_value: null, created_at: at };
  await put(propertyItem(property));
  await put(propertyKeyItem(property));
  return property;
}

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  reads = new DynamoAudienceReads(table.db, table.tableName);
  token = await fullAccessKey(repos.apiKeys);
});
afterAll(() => table.stop());
beforeEach(() => {
  jobs = [];
  raised = [];
});

const deps = (): ContactDeps & { apiKeys: typeof repos.apiKeys; log: typeof log } => ({
  apiKeys: repos.apiKeys,
  reads,
  contacts: new DynamoContactWrites(table.db, table.tableName),
  listing: new DynamoContactListing(table.db, table.tableName),
  cleanup: {
    enqueue: async (job) => {
      if (queueRefuses) throw new Error('SQS refused the message');
      jobs.push(job);
    },
  },
  clock: systemClock,
  events: {
    subscriptions: async () => ({
      wants: () => true,
      publish: async (events: WebhookEvent[]) => void raised.push(...events),
    }),
  },
  log,
});

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
type Invoke = (event: ReturnType<typeof httpEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;

/** One request; path parameters as API Gateway gives them (percent-decoded, `+` kept). */
async function request(
  handler: Invoke,
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
  const event = httpEvent({
    method,
    path,
    routeKey: `${method} ${route}`,
    token: options.token ?? token,
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.query ? { query: options.query } : {}),
    ...(options.params ? { pathParameters: options.params } : {}),
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}

const api = {
  create: (body: unknown, key?: string) =>
    request(makeCreate(deps()), 'POST', '/v1/contacts', { body, ...(key ? { token: key } : {}) }),
  list: (query?: Record<string, string>) => request(makeList(deps()), 'GET', '/v1/contacts', { query }),
  get: (id: string) => request(makeGet(deps()), 'GET', '/v1/contacts/{id}', { params: { id } }),
  update: (id: string, body: unknown) =>
    request(makeUpdate(deps()), 'PATCH', '/v1/contacts/{id}', { params: { id }, body }),
  remove: (id: string) => request(makeDelete(deps()), 'DELETE', '/v1/contacts/{id}', { params: { id } }),
  audience: {
    create: (id: string, body: unknown) =>
      request(makeCreateInAudience(deps()), 'POST', '/v1/audiences/{id}/contacts', { params: { id }, body }),
    list: (id: string, query?: Record<string, string>) =>
      request(makeListInAudience(deps()), 'GET', '/v1/audiences/{id}/contacts', { params: { id }, query }),
    get: (id: string, contact_id: string) =>
      request(makeGetInAudience(deps()), 'GET', '/v1/audiences/{id}/contacts/{contact_id}', {
        params: { id, contact_id },
      }),
    update: (id: string, contact_id: string, body: unknown) =>
      request(makeUpdateInAudience(deps()), 'PATCH', '/v1/audiences/{id}/contacts/{contact_id}', {
        params: { id, contact_id },
        body,
      }),
    remove: (id: string, contact_id: string) =>
      request(makeDeleteInAudience(deps()), 'DELETE', '/v1/audiences/{id}/contacts/{contact_id}', {
        params: { id, contact_id },
      }),
  },
};

let unique = 0;
/** An address no other test uses (the table is shared by the whole file). */
const address = (base = 'ada') => `${base}.${++unique}@example.com`;

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('creating and reading a contact', () => {
  it('creates one (a UUIDv7), read back by id and by address in any case, `+` kept, in Resend’s shapes', async () => {
    const company = await seedProperty(`company_${unique}`, 'string');
    const seats = await seedProperty(`seats_${unique}`, 'number');
    const email = `Ada.Lovelace+news.${++unique}@Example.com`;
    const created = await api.create({
      email,
      first_name: 'Ada',
      last_name: 'Lovelace',
      properties: { [company.key]: 'Analytical', [seats.key]: 3 },
    });
    expect(created.status).toBe(201);
    expectResendShape(created.body, 'CreateContactResponseSuccess');
    expect(created.body).toEqual({ object: 'contact', id: expect.stringMatching(UUID_V7) });

    for (const key of [created.body.id, email, email.toLowerCase(), email.toUpperCase()]) {
      const got = await api.get(key);
      expect(got.status, key).toBe(200);
      expectResendShape(got.body, 'GetContactResponseSuccess');
      expect(got.body).toEqual({
        object: 'contact',
        id: created.body.id,
        email,
        first_name: 'Ada',
        last_name: 'Lovelace',
        created_at: expect.any(String),
        unsubscribed: false,
        properties: { [company.key]: 'Analytical', [seats.key]: 3 },
      });
    }
    // A client (or a proxy) that turned the path's `+` into a space still finds it.
    expect((await api.get(email.replace('+', ' '))).body.id).toBe(created.body.id);
  });

  it('keeps one contact per address: a second create (any case) answers 200 with it and changes nothing', async () => {
    const email = address();
    const first = await api.create({ email, first_name: 'First' });
    const again = await api.create({ email: email.toUpperCase(), first_name: 'Second', unsubscribed: true });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ object: 'contact', id: first.body.id });
    const got = await api.get(email);
    expect(got.body).toMatchObject({ email, first_name: 'First', unsubscribed: false });
    expect(raised.filter((e) => e.type === 'contact.created')).toHaveLength(1);
  });

  it('puts a known address in the segments and topic choices a second create gives (the audience route too), its fields kept', async () => {
    const [audience, other] = [await seedSegment('Known A'), await seedSegment('Known B')];
    const [given, kept] = [await seedTopic('opt_in'), await seedTopic('opt_in')];
    const email = address('known');
    const first = await api.create({
      email,
      first_name: 'First',
      topics: [{ id: kept.id, subscription: 'opt_out' }],
    });
    const again = await api.audience.create(audience.id, {
      email: email.toUpperCase(),
      first_name: 'Second',
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ object: 'contact', id: first.body.id });
    expect((await reads.membershipsOf(first.body.id)).map((m) => m.segment_id)).toEqual([audience.id]);
    const listed = await api.audience.list(audience.id);
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([first.body.id]);
    await api.create({ email, segments: [other.id], topics: [{ id: given.id, subscription: 'opt_out' }] });
    expect((await reads.membershipsOf(first.body.id)).map((m) => m.segment_id).sort()).toEqual(
      [audience.id, other.id].sort(),
    );
    const choices = await reads.choicesOf(first.body.id);
    expect(choices.map((c) => [c.topic_id, c.subscription]).sort()).toEqual(
      [
        [given.id, 'opt_out'],
        [kept.id, 'opt_out'],
      ].sort(),
    );
    expect((await api.get(email)).body.first_name).toBe('First');
  });

  it('joins segments given as ids or as SDK 6.38’s [{id}], with its topic choices, and raises contact.created', async () => {
    const [a, b] = [await seedSegment('A'), await seedSegment('B')];
    const topic = await seedTopic('opt_in');
    const email = address();
    const created = await api.create({
      email,
      segments: [a.id, { id: b.id }],
      topics: [{ id: topic.id, subscription: 'opt_out' }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await reads.membershipsOf(id)).map((m) => m.segment_id).sort()).toEqual([a.id, b.id].sort());
    expect(await reads.choicesOf(id)).toEqual([
      { contact_id: id, topic_id: topic.id, subscription: 'opt_out', updated_at: expect.any(String) },
    ]);
    const event = raised.find((e) => e.type === 'contact.created');
    expect(event?.data).toEqual({
      id,
      audience_id: a.id,
      segment_ids: [a.id, b.id],
      created_at: expect.any(String),
      updated_at: expect.any(String),
      email,
      unsubscribed: false,
    });
  });

  it('refuses an unknown segment, topic or property with a 400 naming it, and writes nothing', async () => {
    const ghost = newUuid();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ segments: [ghost] }, 'segments', ghost],
      [{ topics: [{ id: ghost, subscription: 'opt_in' }] }, 'topics', ghost],
      [{ properties: { never_defined: 'x' } }, 'properties.never_defined', 'never_defined'],
    ];
    for (const [extra, field, named] of cases) {
      const email = address();
      const answer = await api.create({ email, ...extra });
      expect(answer.status, field).toBe(400);
      expect(answer.body.name).toBe('validation_error');
      expect(answer.body.message).toContain(named);
      expect(answer.body.errors[0].field).toBe(field);
      expect(await reads.contactByAddress(email, true)).toBeUndefined();
    }
    const wrongType = await seedProperty(`age_${unique}`, 'number');
    const answer = await api.create({ email: address(), properties: { [wrongType.key]: 'old' } });
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].field).toBe(`properties.${wrongType.key}`);
  });

  it('refuses what is not an address, and unknown fields', async () => {
    expect((await api.create({ email: 'not an address' })).status).toBe(400);
    const unknown = await api.create({ email: address(), nickname: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'nickname', message: 'unknown field' }]);
  });

  it('gets the address the SDK puts in the path unencoded, `+` and case kept, from the local gateway as from API Gateway', () => {
    expect(matchPath('/v1/contacts/{id}', '/v1/contacts/Ada+news@Example.com')).toEqual({
      id: 'Ada+news@Example.com',
    });
    expect(matchPath('/v1/contacts/{id}', '/v1/contacts/ada%2Bnews%40example.com')).toEqual({
      id: 'ada+news@example.com',
    });
  });

  it('answers 404 for a contact that does not exist, by id or address', async () => {
    expect((await api.get(newUuid())).status).toBe(404);
    expect((await api.get('nobody@example.com')).body.name).toBe('not_found');
  });

  it('needs a full-access key: a sending key is refused', async () => {
    const { key, token: sending } = generateApiKey('sender', 'sending_access', new Date());
    await repos.apiKeys.put(key);
    const answer = await api.create({ email: address() }, sending);
    expect(answer.status).toBe(403);
    expect(answer.body.name).toBe('restricted_api_key');
  });
});

describe('listing contacts', () => {
  it('pages every contact newest first with after and before, and one segment’s members by segment_id', async () => {
    const segment = await seedSegment('Listed');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const answer = await api.create({
        email: address('listed'),
        ...(i % 2 ? { segments: [segment.id] } : {}),
      });
      ids.push(answer.body.id);
    }
    const newest = [...ids].reverse();

    const first = await api.list({ limit: '5' });
    expect(first.status).toBe(200);
    expectResendShape(first.body, 'ListContactsResponseSuccess');
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual(newest.slice(0, 5));
    const second = await api.list({ limit: '5', after: newest[4] as string });
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual(newest.slice(5, 10));
    const back = await api.list({ limit: '3', before: newest[5] as string });
    expect(back.body.data.map((c: { id: string }) => c.id)).toEqual(newest.slice(2, 5));

    const members = newest.filter((_, i) => i % 2 === 0); // the odd-numbered creates, newest first
    const bySegment = await api.list({ segment_id: segment.id, limit: '100' });
    expectResendShape(bySegment.body, 'ListContactsResponseSuccess');
    expect(bySegment.body).toMatchObject({ object: 'list', has_more: false });
    expect(bySegment.body.data.map((c: { id: string }) => c.id)).toEqual(members);
    const paged = await api.list({ segment_id: segment.id, limit: '4' });
    expect(paged.body.has_more).toBe(true);
    const rest = await api.list({ segment_id: segment.id, limit: '4', after: paged.body.data[3].id });
    expect([...paged.body.data, ...rest.body.data].map((c: { id: string }) => c.id)).toEqual(members);

    const audience = await api.audience.list(segment.id);
    expect(audience.body.data.map((c: { id: string }) => c.id)).toEqual(members);
  });

  it('answers 404 for a segment that does not exist, and 400 for a cursor that is not a contact id', async () => {
    expect((await api.list({ segment_id: newUuid() })).status).toBe(404);
    expect((await api.audience.list(newUuid())).status).toBe(404);
    const bad = await api.list({ after: 'em_01m80mv90eew9ryfvqd1ksnhes' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('after');
  });
});

describe('changing a contact', () => {
  it('changes what is given, clears with null, merges properties, and raises contact.updated', async () => {
    const city = await seedProperty(`city_${unique}`, 'string');
    const plan = await seedProperty(`plan_${unique}`, 'string');
    const email = address();
    const { body } = await api.create({
      email,
      first_name: 'Ada',
      last_name: 'Lovelace',
      properties: { [city.key]: 'London', [plan.key]: 'free' },
    });
    const answer = await api.update(email, {
      first_name: null,
      unsubscribed: true,
      properties: { [plan.key]: 'pro', [city.key]: null },
    });
    expect(answer.status).toBe(200);
    expectResendShape(answer.body, 'UpdateContactResponseSuccess');
    expect(answer.body).toEqual({ object: 'contact', id: body.id });
    const got = await api.get(body.id);
    expect(got.body.first_name).toBeUndefined();
    expectResendShape(got.body, 'GetContactResponseSuccess');
    expect(got.body).toMatchObject({
      last_name: 'Lovelace',
      unsubscribed: true,
      properties: { [plan.key]: 'pro' },
    });
    expect(raised.map((e) => e.type)).toContain('contact.updated');
    expect(raised.at(-1)?.data).toMatchObject({ id: body.id, unsubscribed: true });
    // An unset name is left out, as the answers leave it (Resend's ContactEventData types it as a string).
    expect(raised.at(-1)?.data).not.toHaveProperty('first_name');
  });

  it('moves a contact to a new address (same id, segments kept); 409 when another contact has it', async () => {
    const segment = await seedSegment('Movers');
    const old = address('old');
    const { body } = await api.create({ email: old, segments: [segment.id] });
    const taken = address('taken');
    await api.create({ email: taken });

    const refused = await api.update(body.id, { email: taken.toUpperCase() });
    expect(refused.status).toBe(409);
    expect((await api.get(old)).body.id).toBe(body.id);

    const moved = address('new');
    expect((await api.update(old, { email: moved })).status).toBe(200);
    expect((await api.get(old)).status).toBe(404);
    expect((await api.get(moved)).body).toMatchObject({ id: body.id, email: moved });
    expect((await api.get(body.id)).body.email).toBe(moved);
    const members = await api.list({ segment_id: segment.id });
    expect(members.body.data).toEqual([expect.objectContaining({ id: body.id, email: moved })]);
    const all = await api.list({ limit: '100' });
    expect(all.body.data.filter((c: { id: string }) => c.id === body.id)).toHaveLength(1);
  });

  it('applies two changes made at once, each over the other (optimistic)', async () => {
    const email = address();
    await api.create({ email });
    const [a, b] = await Promise.all([
      api.update(email, { first_name: 'Ada' }),
      api.update(email, { last_name: 'Lovelace' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((await api.get(email)).body).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace' });
  });

  it('answers 404 for a contact that does not exist', async () => {
    expect((await api.update(newUuid(), { first_name: 'x' })).status).toBe(404);
  });
});

describe('deleting a contact', () => {
  it('deletes it now, queues its memberships’ clean-up, raises contact.deleted with its segments, and touches no other contact', async () => {
    const segment = await seedSegment('Deleting');
    const email = `Gone+${++unique}@Example.com`;
    const { body } = await api.create({ email, segments: [segment.id] });
    const other = await api.create({ email: address('stays'), segments: [segment.id] });

    const answer = await api.remove(email.toLowerCase());
    expect(answer.status).toBe(200);
    expectResendShape(answer.body, 'RemoveContactResponseSuccess');
    expect(answer.body).toEqual({ object: 'contact', id: body.id, contact: body.id, deleted: true });
    expect(jobs).toEqual([{ kind: 'contact', contact_id: body.id }]);
    expect(raised.find((e) => e.type === 'contact.deleted')?.data).toMatchObject({
      id: body.id,
      segment_ids: [segment.id],
    });

    expect((await api.get(body.id)).status).toBe(404);
    expect((await api.get(email)).status).toBe(404);
    expect((await api.remove(body.id)).status).toBe(404);
    // Until the clean-up runs its membership is still there, and the segment's list leaves it out.
    expect(await reads.membershipsOf(body.id)).toHaveLength(1);
    const members = await api.list({ segment_id: segment.id });
    expect(members.body.data.map((c: { id: string }) => c.id)).toEqual([other.body.id]);
    // A new contact of the same address is another contact, in no segment.
    const again = await api.create({ email });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(body.id);
    expect((await api.list({ segment_id: segment.id })).body.data).toHaveLength(1);
  });
});

describe('deleting a contact when the clean-up queue refuses', () => {
  it('answers 500 and keeps the contact, so a retry deletes it and queues its clean-up', async () => {
    const segment = await seedSegment('Refused');
    const email = address('refused');
    const { body } = await api.create({ email, segments: [segment.id] });
    queueRefuses = true;
    try {
      expect((await api.remove(email)).status).toBe(500);
    } finally {
      queueRefuses = false;
    }
    expect((await api.get(email)).status).toBe(200);
    expect((await api.remove(email)).status).toBe(200);
    expect(jobs).toEqual([{ kind: 'contact', contact_id: body.id }]);
    expect(raised.find((e) => e.type === 'contact.deleted')?.data).toMatchObject({
      segment_ids: [segment.id],
    });
  });
});

describe('the audience routes (SDK 6.38 with audienceId)', () => {
  it('creates a contact in the audience, and reads, changes and deletes only the audience’s contacts', async () => {
    const audience = await seedSegment('Audience');
    const email = address('member');
    const created = await api.audience.create(audience.id, { email, first_name: 'M' });
    expect(created.status).toBe(201);
    expectResendShape(created.body, 'CreateContactResponseSuccess');
    expect((await reads.membershipsOf(created.body.id)).map((m) => m.segment_id)).toEqual([audience.id]);

    const outsider = address('outsider');
    await api.create({ email: outsider });
    expect((await api.audience.get(audience.id, outsider)).status).toBe(404);
    expect((await api.audience.update(audience.id, outsider, { first_name: 'x' })).status).toBe(404);
    expect((await api.audience.remove(audience.id, outsider)).status).toBe(404);
    expect((await api.get(outsider)).status).toBe(200);

    const got = await api.audience.get(audience.id, email.toUpperCase());
    expectResendShape(got.body, 'GetContactResponseSuccess');
    expect(got.body).toMatchObject({ id: created.body.id, first_name: 'M' });
    expect((await api.audience.update(audience.id, created.body.id, { last_name: 'N' })).status).toBe(200);
    expect((await api.get(email)).body.last_name).toBe('N');
    const removed = await api.audience.remove(audience.id, email);
    expect(removed.body).toEqual({
      object: 'contact',
      id: created.body.id,
      contact: created.body.id,
      deleted: true,
    });
    expect((await api.get(email)).status).toBe(404);
  });

  it('answers 404 for an audience that does not exist', async () => {
    const ghost = newUuid();
    expect((await api.audience.create(ghost, { email: address() })).status).toBe(404);
    expect((await api.audience.get(ghost, 'a@example.com')).status).toBe(404);
  });
});
