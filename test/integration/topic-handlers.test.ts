/**
 * Topics and a contact's topics (issue 40), through the handlers invoked with
 * API Gateway v2 events, the table on dynalite. Answers are checked against Resend's document
 * (test/fixtures/resend-openapi.json), the webhook payloads against SDK 6.38's types.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type {
  ContactTopicsUpdatedEvent,
  TopicCreatedEvent,
  TopicDeletedEvent,
  TopicUpdatedEvent,
} from 'resend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contactIdItem, contactItem } from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoTopicStore } from '../../functions/adapters/dynamodb/topic-store.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import type { CleanupJob } from '../../functions/contacts/cleanup-jobs.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { makeHandler as makeCreateTopic } from '../../functions/handlers/create-topic.js';
import { makeHandler as makeDeleteTopic } from '../../functions/handlers/delete-topic.js';
import { makeHandler as makeGetTopic } from '../../functions/handlers/get-topic.js';
import { makeHandler as makeListContactTopics } from '../../functions/handlers/list-contact-topics.js';
import { makeHandler as makeListTopics } from '../../functions/handlers/list-topics.js';
import { makeHandler as makeUpdateContactTopics } from '../../functions/handlers/update-contact-topics.js';
import { makeHandler as makeUpdateTopic } from '../../functions/handlers/update-topic.js';
import { newUuid } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { messageBody, type WebhookEvent } from '../../functions/webhooks/model.js';
import type { EventPublisher } from '../../functions/webhooks/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let token: string;
let published: WebhookEvent[];
let jobs: CleanupJob[];
let queueRefuses = false;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  token = await fullAccessKey(repos.apiKeys);
});
afterAll(() => table.stop());
beforeEach(() => {
  published = [];
  jobs = [];
});

/** Every event raised, as if one endpoint took every type. */
const events: EventPublisher = {
  subscriptions: async () => ({
    wants: () => true,
    publish: async (raised) => {
      published.push(...raised);
    },
  }),
};

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
type Invoke = (event: ReturnType<typeof httpEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;

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
  let path = route;
  for (const [name, value] of Object.entries(options.params ?? {}))
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  const event = httpEvent({
    method,
    path,
    routeKey: `${method} ${route}`,
    token: options.token ?? token,
    body: options.body,
    query: options.query,
    ...(options.params ? { pathParameters: options.params } : {}),
  });
  const response = (await invoke(handler, event)) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}
const invoke = (handler: Invoke, event: ReturnType<typeof httpEvent>) => handler(event, context());

const deps = () => ({
  apiKeys: repos.apiKeys,
  topics: new DynamoTopicStore(table.db, table.tableName),
  audience: new DynamoAudienceReads(table.db, table.tableName),
  events,
  cleanup: {
    enqueue: async (job: CleanupJob) => {
      if (queueRefuses) throw new Error('SQS refused the message');
      jobs.push(job);
    },
  },
  clock: systemClock,
  log,
});

const TOPIC = '/v1/topics/{id}';
const CONTACT_TOPICS = '/v1/contacts/{id}/topics';
const api = {
  createTopic: (body: unknown, key?: string) =>
    request(makeCreateTopic(deps()), 'POST', '/v1/topics', { body, ...(key ? { token: key } : {}) }),
  listTopics: (query?: Record<string, string>) =>
    request(makeListTopics(deps()), 'GET', '/v1/topics', { query }),
  getTopic: (id: string) => request(makeGetTopic(deps()), 'GET', TOPIC, { params: { id } }),
  updateTopic: (id: string, body: unknown) =>
    request(makeUpdateTopic(deps()), 'PATCH', TOPIC, { params: { id }, body }),
  deleteTopic: (id: string) => request(makeDeleteTopic(deps()), 'DELETE', TOPIC, { params: { id } }),
  contactTopics: (contactId: string, query?: Record<string, string>) =>
    request(makeListContactTopics(deps()), 'GET', CONTACT_TOPICS, {
      params: { id: contactId },
      query,
    }),
  setContactTopics: (contactId: string, body: unknown) =>
    request(makeUpdateContactTopics(deps()), 'PATCH', CONTACT_TOPICS, {
      params: { id: contactId },
      body,
    }),
};

function expectValidationError(answer: Answer, field: string, message: RegExp = /./) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body).toMatchObject({ statusCode: 400, name: 'validation_error' });
  expect(answer.body.errors, JSON.stringify(answer.body)).toContainEqual({
    field,
    message: expect.stringMatching(message),
  });
}

/** What an endpoint receives for an event (webhooks/model.ts messageBody). */
const received = (event: WebhookEvent | undefined) => JSON.parse(messageBody(event as WebhookEvent));

async function createTopic(body: Record<string, unknown>): Promise<string> {
  const created = await api.createTopic(body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

/** A contact, as the contacts' routes store it (audience-items.ts). */
async function seedContact(email: string, props: Contact['props'] = {}): Promise<Contact> {
  const at = new Date().toISOString();
  const contact: Contact = {
    id: newUuid(),
    email,
    first_name: null,
    last_name: null,
    unsubscribed: false,
    props,
    created_at: at,
    updated_at: at,
  };
  for (const Item of [contactItem(contact), contactIdItem(contact)])
    await table.db.send(new PutCommand({ TableName: table.tableName, Item }));
  return contact;
}

describe('topics', () => {
  it("are created, listed newest first, read, updated and deleted in Resend's shapes, each raising its event in SDK 6.38's payload", async () => {
    const created = await api.createTopic({
      name: 'Product news',
      description: 'Monthly.',
      default_subscription: 'opt_in',
      visibility: 'public',
    });
    expect(created.status).toBe(201);
    expectResendShape(created.body, 'CreateTopicResponseSuccess');
    expect(created.body).toEqual({ object: 'topic', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const id: string = created.body.id;
    const topic = await api.getTopic(id);
    expect(topic.status).toBe(200);
    expectResendShape(topic.body, 'GetTopicResponseSuccess');
    expect(topic.body).toEqual({
      object: 'topic',
      id,
      name: 'Product news',
      description: 'Monthly.',
      default_subscription: 'opt_in',
      visibility: 'public',
      created_at: expect.any(String),
    });
    const createdEvent: TopicCreatedEvent = {
      type: 'topic.created',
      created_at: expect.any(String),
      data: {
        id,
        name: 'Product news',
        description: 'Monthly.',
        default_subscription: 'opt_in',
        deleted: false,
        created_at: topic.body.created_at,
        updated_at: topic.body.created_at,
      },
    };
    expect(received(published[0])).toEqual({
      ...createdEvent,
      data: { ...createdEvent.data, visibility: 'public' },
    });

    // Private unless given; no description field when it has none (Resend's schema says string).
    const second = await createTopic({ name: 'Events', default_subscription: 'opt_out' });
    const plain = await api.getTopic(second);
    expectResendShape(plain.body, 'GetTopicResponseSuccess');
    expect(plain.body.visibility).toBe('private');
    expect(plain.body).not.toHaveProperty('description');

    const listed = await api.listTopics({ limit: '1' });
    expect(listed.status).toBe(200);
    expectResendShape(listed.body, 'ListTopicsResponseSuccess');
    expect(listed.body.has_more).toBe(true);
    expect(listed.body.data[0].id).toBe(second);
    const older = await api.listTopics({ limit: '100', after: second });
    expect(older.body.data.map((t: { id: string }) => t.id)).toContain(id);
    expect(older.body.data.map((t: { id: string }) => t.id)).not.toContain(second);
    expectValidationError(await api.listTopics({ after: 'em_x' }), 'after');

    // SDK 6.38's update sends its options whole, the id among them.
    published = [];
    const updated = await api.updateTopic(id, { id, name: 'Product updates', visibility: 'private' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expectResendShape(updated.body, 'UpdateTopicResponseSuccess');
    expect(updated.body).toEqual({ object: 'topic', id });
    const after = (await api.getTopic(id)).body;
    expect(after).toMatchObject({ name: 'Product updates', visibility: 'private', description: 'Monthly.' });
    const updatedEvent: TopicUpdatedEvent = {
      type: 'topic.updated',
      created_at: expect.any(String),
      data: {
        id,
        name: 'Product updates',
        description: 'Monthly.',
        default_subscription: 'opt_in',
        deleted: false,
        created_at: after.created_at,
        updated_at: expect.any(String),
      },
    };
    expect(received(published[0])).toEqual({
      ...updatedEvent,
      data: { ...updatedEvent.data, visibility: 'private' },
    });
    // null removes the description.
    expect((await api.updateTopic(id, { description: null })).status).toBe(200);
    expect((await api.getTopic(id)).body).not.toHaveProperty('description');

    published = [];
    const removed = await api.deleteTopic(id);
    expect(removed.status).toBe(200);
    expectResendShape(removed.body, 'RemoveTopicResponseSuccess');
    expect(removed.body).toEqual({ object: 'topic', id, deleted: true });
    expect(jobs).toEqual([{ kind: 'topic', topic_id: id }]);
    const deletedEvent: TopicDeletedEvent = {
      type: 'topic.deleted',
      created_at: expect.any(String),
      data: {
        id,
        name: 'Product updates',
        description: null,
        default_subscription: 'opt_in',
        deleted: true,
        created_at: after.created_at,
        updated_at: expect.any(String),
      },
    };
    expect(received(published[0])).toEqual({
      ...deletedEvent,
      data: { ...deletedEvent.data, visibility: 'private' },
    });
    expect((await api.getTopic(id)).status).toBe(404);
    expect((await api.deleteTopic(id)).status).toBe(404);
    expect((await api.updateTopic(id, { name: 'x' })).status).toBe(404);
    // The 404 delete queued a job too (queued before the delete): for no topic, it deletes nothing.
    expect(jobs).toEqual([
      { kind: 'topic', topic_id: id },
      { kind: 'topic', topic_id: id },
    ]);
  });

  it('keeps the topic when the clean-up queue refuses (500), so a retry deletes it and queues its clean-up', async () => {
    const id = await createTopic({ name: 'Kept', default_subscription: 'opt_in' });
    queueRefuses = true;
    try {
      expect((await api.deleteTopic(id)).status).toBe(500);
    } finally {
      queueRefuses = false;
    }
    expect((await api.getTopic(id)).status).toBe(200);
    expect((await api.deleteTopic(id)).status).toBe(200);
    expect(jobs).toEqual([{ kind: 'topic', topic_id: id }]);
  });

  it("keep default_subscription as created: a different one is a 400, the same one is accepted; an id in the body must be the path's", async () => {
    const id = await createTopic({ name: 'Digest', default_subscription: 'opt_in' });
    expectValidationError(
      await api.updateTopic(id, { default_subscription: 'opt_out' }),
      'default_subscription',
      /cannot be changed/,
    );
    expect((await api.getTopic(id)).body.default_subscription).toBe('opt_in');
    expect((await api.updateTopic(id, { default_subscription: 'opt_in', name: 'Daily' })).status).toBe(200);
    expectValidationError(await api.updateTopic(id, { id: newUuid(), name: 'x' }), 'id', /path/);
    expectValidationError(await api.updateTopic(id, { name: '' }), 'name');
    expectValidationError(await api.updateTopic(id, { name: 'x'.repeat(51) }), 'name');
    expectValidationError(await api.createTopic({ name: 'No default' }), 'default_subscription');
    expectValidationError(
      await api.createTopic({ name: 'x', default_subscription: 'opt_in', description: 'd'.repeat(201) }),
      'description',
    );
    expectValidationError(
      await api.createTopic({ name: 'x', default_subscription: 'maybe' }),
      'default_subscription',
    );
  });

  it('need a full-access key', async () => {
    const { key, token: sending } = generateApiKey('sending', 'sending_access', new Date());
    await repos.apiKeys.put(key);
    const refused = await api.createTopic({ name: 'x', default_subscription: 'opt_in' }, sending);
    expect(refused.status).toBe(403);
    expect(refused.body.name).toBe('restricted_api_key');
  });
});

describe("a contact's topics", () => {
  it("lists every topic with the contact's choice or the topic's default, by id or by address (any case, with +)", async () => {
    const optIn = await createTopic({ name: 'Weekly', default_subscription: 'opt_in' });
    const optOut = await createTopic({
      name: 'Offers',
      default_subscription: 'opt_out',
      description: 'Deals.',
    });
    const contact = await seedContact('Ann+news@Example.com');

    const before = await api.contactTopics(contact.id, { limit: '100' });
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expectResendShape(before.body, 'GetContactTopicsResponseSuccess');
    const subscriptions = (body: { data: { id: string; subscription: string }[] }) =>
      Object.fromEntries(body.data.map((t) => [t.id, t.subscription]));
    expect(subscriptions(before.body)).toMatchObject({ [optIn]: 'opt_in', [optOut]: 'opt_out' });
    expect(before.body.data.find((t: { id: string }) => t.id === optOut)).toEqual({
      id: optOut,
      name: 'Offers',
      description: 'Deals.',
      subscription: 'opt_out',
    });

    // SDK 6.38 sends the bare list, the address in the path as given.
    published = [];
    const changed = await api.setContactTopics('ann+NEWS@example.COM', [
      { id: optIn, subscription: 'opt_out' },
      { id: optOut, subscription: 'opt_in' },
    ]);
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expectResendShape(changed.body, 'UpdateContactTopicsResponseSuccess');
    expect(changed.body).toEqual({
      object: 'contact_topics',
      id: contact.id,
      contact_id: contact.id,
      topics: [
        { id: optIn, subscription: 'opt_out' },
        { id: optOut, subscription: 'opt_in' },
      ],
    });
    const payload: ContactTopicsUpdatedEvent = {
      type: 'contact.topics.updated',
      created_at: expect.any(String),
      data: {
        email: 'Ann+news@Example.com',
        topics: [
          { id: optIn, subscription: 'opt_out' },
          { id: optOut, subscription: 'opt_in' },
        ],
      },
    };
    expect(published).toHaveLength(1);
    expect(received(published[0])).toEqual(payload);

    const byAddress = await api.contactTopics('ANN+news@example.com', { limit: '100' });
    expect(subscriptions(byAddress.body)).toMatchObject({ [optIn]: 'opt_out', [optOut]: 'opt_in' });

    // Resend's {topics: […]}; the topics not named keep their choice.
    const again = await api.setContactTopics(contact.id, { topics: [{ id: optIn, subscription: 'opt_in' }] });
    expect(again.status).toBe(200);
    const now = await api.contactTopics(contact.id, { limit: '100' });
    expect(subscriptions(now.body)).toMatchObject({ [optIn]: 'opt_in', [optOut]: 'opt_in' });

    // Pages, as every list.
    const first = await api.contactTopics(contact.id, { limit: '1' });
    expect(first.body.data).toHaveLength(1);
    expect(first.body.has_more).toBe(true);
  });

  it('refuses an unknown topic, a topic named twice, a bad body, and answers 404 for a contact that does not exist', async () => {
    const topic = await createTopic({ name: 'Known', default_subscription: 'opt_in' });
    const contact = await seedContact(`bob-${newUuid()}@example.com`);
    const unknown = newUuid();
    published = [];
    expectValidationError(
      await api.setContactTopics(contact.id, [
        { id: topic, subscription: 'opt_in' },
        { id: unknown, subscription: 'opt_out' },
      ]),
      'topics.1.id',
      new RegExp(unknown),
    );
    expectValidationError(
      await api.setContactTopics(contact.id, [
        { id: topic, subscription: 'opt_in' },
        { id: topic, subscription: 'opt_out' },
      ]),
      'topics.1.id',
      /twice/,
    );
    expect((await api.setContactTopics(contact.id, [{ id: topic, subscription: 'yes' }])).status).toBe(400);
    expect((await api.setContactTopics(contact.id, { topics: [] })).status).toBe(400);
    expect((await api.setContactTopics(contact.id, { topic: [] })).status).toBe(400);
    expect(published).toEqual([]);
    // Nothing was written by the refused requests.
    const listed = await api.contactTopics(contact.id, { limit: '100' });
    expect(listed.body.data.find((t: { id: string }) => t.id === topic).subscription).toBe('opt_in');

    expect((await api.contactTopics(newUuid())).status).toBe(404);
    expect((await api.contactTopics('nobody@example.com')).status).toBe(404);
    expect(
      (await api.setContactTopics('nobody@example.com', [{ id: topic, subscription: 'opt_in' }])).status,
    ).toBe(404);
  });
});
