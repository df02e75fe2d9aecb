/**
 * Contact properties (issue 40), through the handlers invoked with API Gateway v2 events, the
 * table on dynalite. Answers are checked against Resend's document (test/fixtures/resend-openapi.json).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contactIdItem,
  contactItem,
  propertyKeyItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoContactPropertyStore } from '../../functions/adapters/dynamodb/contact-property-store.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { propertiesAnswer } from '../../functions/contact-properties/values.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { makeHandler as makeCreateProperty } from '../../functions/handlers/create-contact-property.js';
import { makeHandler as makeDeleteProperty } from '../../functions/handlers/delete-contact-property.js';
import { makeHandler as makeGetProperty } from '../../functions/handlers/get-contact-property.js';
import { makeHandler as makeListProperties } from '../../functions/handlers/list-contact-properties.js';
import { makeHandler as makeUpdateProperty } from '../../functions/handlers/update-contact-property.js';
import { newUuid } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let token: string;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  token = await fullAccessKey(repos.apiKeys);
});
afterAll(() => table.stop());

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
type Invoke = (event: ReturnType<typeof httpEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;

async function request(
  handler: Invoke,
  method: string,
  route: string,
  options: { id?: string; body?: unknown; query?: Record<string, string> } = {},
): Promise<Answer> {
  const { id, ...rest } = options;
  const event = httpEvent({
    method,
    path: id === undefined ? route : route.replace('{id}', encodeURIComponent(id)),
    routeKey: `${method} ${route}`,
    token,
    ...rest,
    ...(id === undefined ? {} : { pathParameters: { id } }),
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}

const deps = () => ({
  apiKeys: repos.apiKeys,
  properties: new DynamoContactPropertyStore(table.db, table.tableName),
  clock: systemClock,
  log,
});

const PROPERTY = '/v1/contact-properties/{id}';
const api = {
  createProperty: (body: unknown) =>
    request(makeCreateProperty(deps()), 'POST', '/v1/contact-properties', { body }),
  listProperties: (query?: Record<string, string>) =>
    request(makeListProperties(deps()), 'GET', '/v1/contact-properties', { query }),
  getProperty: (id: string) => request(makeGetProperty(deps()), 'GET', PROPERTY, { id }),
  updateProperty: (id: string, body: unknown) =>
    request(makeUpdateProperty(deps()), 'PATCH', PROPERTY, { id, body }),
  deleteProperty: (id: string) => request(makeDeleteProperty(deps()), 'DELETE', PROPERTY, { id }),
};

function expectValidationError(answer: Answer, field: string, message: RegExp = /./) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body).toMatchObject({ statusCode: 400, name: 'validation_error' });
  expect(answer.body.errors, JSON.stringify(answer.body)).toContainEqual({
    field,
    message: expect.stringMatching(message),
  });
}

/** A contact with these property values (by property id), as the contacts' routes store it. */
async function seedContact(email: string, props: Contact['props']): Promise<Contact> {
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

describe('contact properties', () => {
  it("are created, listed, read, updated and deleted in Resend's shapes", async () => {
    const created = await api.createProperty({ key: 'plan', type: 'string', fallback_value: 'free' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectResendShape(created.body, 'CreateContactPropertyResponseSuccess');
    const id: string = created.body.id;
    const got = await api.getProperty(id);
    expectResendShape(got.body, 'GetContactPropertyResponseSuccess');
    expect(got.body).toEqual({
      object: 'contact_property',
      id,
      key: 'plan',
      type: 'string',
      fallback_value: 'free',
      created_at: expect.any(String),
    });
    // SDK 6.38 sends fallback_value only when given.
    const seats = (await api.createProperty({ key: 'seats', type: 'number' })).body.id as string;
    const bare = await api.getProperty(seats);
    expectResendShape(bare.body, 'GetContactPropertyResponseSuccess');
    expect(bare.body).not.toHaveProperty('fallback_value');

    const listed = await api.listProperties({ limit: '1' });
    expectResendShape(listed.body, 'ListContactPropertiesResponseSuccess');
    expect(listed.body).toMatchObject({
      object: 'list',
      has_more: true,
      data: [{ id: seats, key: 'seats' }],
    });
    const rest = await api.listProperties({ after: seats });
    expect(rest.body.data.map((p: { id: string }) => p.id)).toContain(id);

    const updated = await api.updateProperty(seats, { fallback_value: 3 });
    expect(updated.status).toBe(200);
    expectResendShape(updated.body, 'UpdateContactPropertyResponseSuccess');
    expect(updated.body).toEqual({ object: 'contact_property', id: seats });
    expect((await api.getProperty(seats)).body.fallback_value).toBe(3);
    expect((await api.updateProperty(seats, { fallback_value: null })).status).toBe(200);
    expect((await api.getProperty(seats)).body).not.toHaveProperty('fallback_value');
    expect((await api.updateProperty(seats, {})).status).toBe(200);

    const removed = await api.deleteProperty(seats);
    expectResendShape(removed.body, 'RemoveContactPropertyResponseSuccess');
    expect(removed.body).toEqual({ object: 'contact_property', id: seats, deleted: true });
    expect((await api.getProperty(seats)).status).toBe(404);
    expect((await api.deleteProperty(seats)).status).toBe(404);
    expect((await api.updateProperty(seats, { fallback_value: 1 })).status).toBe(404);
  });

  it('keep keys unique (409), free a deleted key, and take over a key left by a create that stopped half-way', async () => {
    const id = (await api.createProperty({ key: 'company', type: 'string' })).body.id as string;
    const taken = await api.createProperty({ key: 'company', type: 'number' });
    expect(taken.status).toBe(409);
    expect(taken.body.name).toBe('already_exists');
    // Keys compare exactly, as Resend's.
    expect((await api.createProperty({ key: 'Company', type: 'string' })).status).toBe(201);

    expect((await api.deleteProperty(id)).status).toBe(200);
    const again = await api.createProperty({ key: 'company', type: 'number' });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(id);

    // A key item naming a property that was never written (a crash between the two puts).
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: propertyKeyItem({ id: newUuid(), key: 'orphaned' }),
      }),
    );
    expect((await api.createProperty({ key: 'orphaned', type: 'string' })).status).toBe(201);
    expect((await api.createProperty({ key: 'orphaned', type: 'string' })).status).toBe(409);
  });

  it('check the key, the type and the fallback value', async () => {
    expectValidationError(await api.createProperty({ key: 'has space', type: 'string' }), 'key');
    expectValidationError(await api.createProperty({ key: 'k'.repeat(51), type: 'string' }), 'key');
    expectValidationError(await api.createProperty({ key: 'ok', type: 'boolean' }), 'type');
    expectValidationError(
      await api.createProperty({ key: 'age', type: 'number', fallback_value: 'ten' }),
      'fallback_value',
      /number/,
    );
    expectValidationError(
      await api.createProperty({ key: 'tier', type: 'string', fallback_value: 1 }),
      'fallback_value',
      /string/,
    );
    const id = (await api.createProperty({ key: 'score', type: 'number', fallback_value: 0 })).body
      .id as string;
    expectValidationError(
      await api.updateProperty(id, { fallback_value: 'high' }),
      'fallback_value',
      /number/,
    );
    expect((await api.updateProperty(id, { key: 'renamed' })).status).toBe(400);
    expect((await api.updateProperty(id, { type: 'string' })).status).toBe(400);
    expect((await api.getProperty(id)).body).toMatchObject({
      key: 'score',
      type: 'number',
      fallback_value: 0,
    });
  });

  it("vanish from every contact when deleted: values are kept by the property's id, so nothing is scanned", async () => {
    const id = (await api.createProperty({ key: 'city', type: 'string' })).body.id as string;
    const contact = await seedContact(`carol-${newUuid()}@example.com`, { [id]: 'Lyon' });
    const reads = new DynamoAudienceReads(table.db, table.tableName);
    const shown = async () =>
      propertiesAnswer((await reads.contact(contact.id, true))?.props ?? {}, await reads.properties());
    expect(await shown()).toMatchObject({ city: 'Lyon' });
    expect((await api.deleteProperty(id)).status).toBe(200);
    expect(await shown()).not.toHaveProperty('city');
    // A property created again under the key starts with no values.
    expect((await api.createProperty({ key: 'city', type: 'string' })).status).toBe(201);
    expect(await shown()).not.toHaveProperty('city');
  });
});
