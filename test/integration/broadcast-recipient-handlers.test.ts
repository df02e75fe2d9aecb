/**
 * A broadcast's recipients by type and its clicked links (issue 41), through their handlers invoked
 * with API Gateway v2 events over dynalite, the tally's items written by its adapter; answers checked
 * against Resend's document (ListBroadcastRecipientsResponseSuccess, ListBroadcastClickedLinksResponseSuccess).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactIdItem, contactItem } from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoBroadcastRecipientReads } from '../../functions/adapters/dynamodb/broadcast-recipients.js';
import { DynamoBroadcastTally } from '../../functions/adapters/dynamodb/broadcast-tally.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import type { BroadcastTallyEntry } from '../../functions/emails/broadcast-tally.js';
import { makeHandler as makeClickedLinks } from '../../functions/handlers/list-broadcast-clicked-links.js';
import { makeHandler as makeRecipients } from '../../functions/handlers/list-broadcast-recipients.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let token: string;
let sendingToken: string;
let tally: DynamoBroadcastTally;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  token = await fullAccessKey(repos.apiKeys);
  const sending = generateApiKey('sending', 'sending_access', new Date());
  await repos.apiKeys.put(sending.key);
  sendingToken = sending.token;
  tally = new DynamoBroadcastTally(table.db, table.tableName);
});
afterAll(() => table.stop());

const deps = () => ({
  apiKeys: repos.apiKeys,
  recipients: new DynamoBroadcastRecipientReads(table.db, table.tableName),
  audience: new DynamoAudienceReads(table.db, table.tableName),
  clock: systemClock,
  log,
});

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
async function get(
  which: 'recipients' | 'clicked-links',
  id: string,
  query?: Record<string, string>,
  key = token,
): Promise<Answer> {
  const route = `/v1/broadcasts/{id}/${which}`;
  const handler = which === 'recipients' ? makeRecipients(deps()) : makeClickedLinks(deps());
  const event = httpEvent({
    method: 'GET',
    path: route.replace('{id}', id),
    routeKey: `GET ${route}`,
    token: key,
    query,
    pathParameters: { id },
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}

async function broadcast() {
  const id = newUuid();
  await table.db.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: keys.broadcasts, sk: keys.broadcast(id), id, status: 'sending' },
    }),
  );
  return id;
}

const AT = '2026-11-28T12:00:00.000Z';
const record = (
  broadcastId: string,
  emailId: string,
  address: string,
  type: BroadcastTallyEntry['type'],
  more: Partial<BroadcastTallyEntry> = {},
) => tally.record({ broadcastId, emailId, address, type, at: AT, ...more });

describe('GET /v1/broadcasts/{id}/recipients', () => {
  it("answers each type in Resend's shape: count, bounce_type, clicked_links, and the contact", async () => {
    const b = await broadcast();
    const [ann, bob] = [newEmailId(), newEmailId()];
    const contactId = newUuid();
    const contact = {
      id: contactId,
      email: 'ann@example.com',
      first_name: null,
      last_name: null,
      unsubscribed: false,
      props: {},
      created_at: AT,
      updated_at: AT,
    };
    for (const Item of [contactItem(contact), contactIdItem(contact)])
      await table.db.send(new PutCommand({ TableName: table.tableName, Item }));
    for (const [id, address] of [
      [ann, 'ann@example.com'],
      [bob, 'bob@example.com'],
    ] as const) {
      await record(b, id, address, 'sent');
      await record(b, id, address, 'opened');
    }
    await record(b, ann, 'ann@example.com', 'opened');
    await record(b, ann, 'ann@example.com', 'clicked', { link: 'https://acme.test/a' });
    await record(b, bob, 'bob@example.com', 'bounced', { bounceType: 'transient' });

    const sent = await get('recipients', b, { type: 'sent' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expectResendShape(sent.body, 'ListBroadcastRecipientsResponseSuccess');
    expect(sent.body).toMatchObject({
      object: 'list',
      has_more: false,
      data: [
        { contact_id: contactId, email: 'ann@example.com', email_id: ann, created_at: AT },
        { contact_id: null, email: 'bob@example.com', email_id: bob },
      ],
    });
    expect(sent.body.data[0]).not.toHaveProperty('count');

    const opened = await get('recipients', b, { type: 'opened' });
    expectResendShape(opened.body, 'ListBroadcastRecipientsResponseSuccess');
    expect(opened.body.data.map((r: { count: number }) => r.count)).toEqual([2, 1]);

    const clicked = await get('recipients', b, { type: 'clicked' });
    expectResendShape(clicked.body, 'ListBroadcastRecipientsResponseSuccess');
    expect(clicked.body.data).toMatchObject([
      { email: 'ann@example.com', count: 1, clicked_links: [{ url: 'https://acme.test/a', clicks: 1 }] },
    ]);

    const bounced = await get('recipients', b, { type: 'bounced' });
    expectResendShape(bounced.body, 'ListBroadcastRecipientsResponseSuccess');
    expect(bounced.body.data).toMatchObject([{ email: 'bob@example.com', bounce_type: 'transient' }]);
    expect((await get('recipients', b, { type: 'bounced', bounce_type: 'permanent' })).body.data).toEqual([]);

    // The email filter (compared case-insensitively).
    const one = await get('recipients', b, { type: 'sent', email: 'Bob@Example.com' });
    expect(one.body.data.map((r: { email: string }) => r.email)).toEqual(['bob@example.com']);
  });

  it('pages with opaque cursors, after and before', async () => {
    const b = await broadcast();
    const addresses = Array.from({ length: 7 }, (_, i) => `p${i}@example.com`);
    for (const address of addresses) await record(b, newEmailId(), address, 'delivered');
    const first = await get('recipients', b, { type: 'delivered', limit: '3' });
    expect(first.body.has_more).toBe(true);
    const second = await get('recipients', b, {
      type: 'delivered',
      limit: '3',
      after: first.body.data[2].id,
    });
    expect(second.body.data.map((r: { email: string }) => r.email)).toEqual(addresses.slice(3, 6));
    const back = await get('recipients', b, {
      type: 'delivered',
      limit: '3',
      before: second.body.data[0].id,
    });
    expect(back.body.data.map((r: { email: string }) => r.email)).toEqual(addresses.slice(0, 3));
    expect(back.body.has_more).toBe(false);
  });

  it('refuses a missing or unknown type, a bounce_type without bounced, and both cursors', async () => {
    const b = await broadcast();
    for (const [query, field] of [
      [{}, 'type'],
      [{ type: 'read' }, 'type'],
      [{ type: 'sent', bounce_type: 'permanent' }, 'bounce_type'],
      [{ type: 'bounced', bounce_type: 'soft' }, 'bounce_type'],
      [{ type: 'sent', after: 'YQ', before: 'Yg' }, 'before'],
      [{ type: 'sent', after: 'not a cursor!' }, 'after'],
    ] as const) {
      const answer = await get('recipients', b, query);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.name).toBe('validation_error');
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const wrong = await get('recipients', b, { type: 'read' });
    expect(wrong.body.message).toMatch(
      /sent, delivered, opened, clicked, bounced, complained, unsubscribed, suppressed/,
    );
  });

  it('answers 404 for a broadcast that does not exist, and needs a full-access key', async () => {
    const missing = await get('recipients', newUuid(), { type: 'sent' });
    expect(missing.status).toBe(404);
    expect(missing.body.name).toBe('not_found');
    const b = await broadcast();
    const refused = await get('recipients', b, { type: 'sent' }, sendingToken);
    expect(refused.status).toBe(403);
    expect(refused.body.name).toBe('restricted_api_key');
  });
});

describe('GET /v1/broadcasts/{id}/clicked-links', () => {
  it("answers each link's clicks and unique clicks in Resend's shape", async () => {
    const b = await broadcast();
    const [ann, bob] = [newEmailId(), newEmailId()];
    await record(b, ann, 'ann@example.com', 'clicked', { link: 'https://acme.test/a' });
    await record(b, ann, 'ann@example.com', 'clicked', { link: 'https://acme.test/a' });
    await record(b, bob, 'bob@example.com', 'clicked', { link: 'https://acme.test/a' });
    await record(b, bob, 'bob@example.com', 'clicked', { link: 'https://acme.test/b' });
    const answer = await get('clicked-links', b);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expectResendShape(answer.body, 'ListBroadcastClickedLinksResponseSuccess');
    const byUrl = Object.fromEntries(
      answer.body.data.map((l: { url: string; clicks: number; unique_clicks: number }) => [
        l.url,
        [l.clicks, l.unique_clicks],
      ]),
    );
    expect(byUrl).toEqual({ 'https://acme.test/a': [3, 2], 'https://acme.test/b': [1, 1] });
    const paged = await get('clicked-links', b, { limit: '1' });
    expect(paged.body.has_more).toBe(true);
    const rest = await get('clicked-links', b, { limit: '1', after: paged.body.data[0].id });
    expect(rest.body).toMatchObject({ has_more: false, data: [{ url: expect.any(String) }] });
    expect(rest.body.data[0].url).not.toBe(paged.body.data[0].url);
    expect((await get('clicked-links', newUuid())).status).toBe(404);
  });
});
