/**
 * Broadcasts' API (issue 41), through the handlers invoked with API Gateway v2 events, the table
 * on dynalite: create, list, get, update, delete, send, cancel, duplicate and preview, each rule
 * of their statuses, and the fan-out's first step queued (a recording queue stands for SQS).
 * Answers are checked against Resend's document (test/fixtures/resend-openapi.json).
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contactIdItem, contactItem } from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoBroadcastStore } from '../../functions/adapters/dynamodb/broadcast-store.js';
import { DynamoContactPropertyStore } from '../../functions/adapters/dynamodb/contact-property-store.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoSegmentStore } from '../../functions/adapters/dynamodb/segment-store.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { DynamoTopicStore } from '../../functions/adapters/dynamodb/topic-store.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import type { BroadcastTotals } from '../../functions/broadcasts/broadcast.js';
import type { Contact } from '../../functions/contacts/contact.js';
import { verifiedSenderDomains } from '../../functions/domains/sending.js';
import { makeHandler as makeCancel } from '../../functions/handlers/cancel-broadcast.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-broadcast.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-broadcast.js';
import { makeHandler as makeDuplicate } from '../../functions/handlers/duplicate-broadcast.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-broadcast.js';
import { makeHandler as makeList } from '../../functions/handlers/list-broadcasts.js';
import { makeHandler as makePreview } from '../../functions/handlers/preview-broadcast.js';
import { makeHandler as makeSend } from '../../functions/handlers/send-broadcast.js';
import { makeHandler as makeUpdate } from '../../functions/handlers/update-broadcast.js';
import { newUuid } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey, storeDomain } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let token: string;
let sendingToken: string;
let segmentId: string;
let topicId: string;
/** The fan-out steps queued: (broadcast, generation, delay). */
let steps: { id: string; generation: number; delayMs: number }[];
let queueRefuses = false;
let totals: BroadcastTotals | undefined;
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
  await storeDomain(repos.domains, 'acme.test', 'verified');
  await storeDomain(repos.domains, 'pending.test', 'pending');
  const at = new Date().toISOString();
  segmentId = newUuid();
  await new DynamoSegmentStore(table.db, table.tableName).create({
    id: segmentId,
    name: 'All',
    created_at: at,
  });
  topicId = newUuid();
  await new DynamoTopicStore(table.db, table.tableName).create({
    id: topicId,
    name: 'News',
    description: null,
    default_subscription: 'opt_in',
    visibility: 'public',
    created_at: at,
    updated_at: at,
  });
  await new DynamoContactPropertyStore(table.db, table.tableName).create({
    id: newUuid(),
    key: 'plan',
    type: 'string',
    fallback_value: 'free',
    created_at: at,
  });
  deps = {
    apiKeys: repos.apiKeys,
    broadcasts: new DynamoBroadcastStore(table.db, table.tableName),
    audience: new DynamoAudienceReads(table.db, table.tableName),
    assertSenderDomain: verifiedSenderDomains(repos.domains, systemClock),
    fanOut: {
      next: async (id: string, generation: number, delayMs: number) => {
        if (queueRefuses) throw new Error('SQS refused the message');
        steps.push({ id, generation, delayMs });
      },
    },
    totals: {
      totals: async () => {
        if (!totals) throw new Error('no totals yet');
        return totals;
      },
    },
    previewUnsubscribeUrl: 'https://mail.acme.test/unsubscribe/preview',
    clock: systemClock,
    log,
  };
});
afterAll(() => table.stop());
beforeEach(() => {
  steps = [];
  queueRefuses = false;
  totals = undefined;
});

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
type Invoke = (event: ReturnType<typeof httpEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;

async function request(
  handler: Invoke,
  method: string,
  route: string,
  options: { id?: string; body?: unknown; query?: Record<string, string>; token?: string } = {},
): Promise<Answer> {
  const path = options.id === undefined ? route : route.replace('{id}', options.id);
  const event = httpEvent({
    method,
    path,
    routeKey: `${method} ${route}`,
    token: options.token ?? token,
    body: options.body,
    query: options.query,
    ...(options.id === undefined ? {} : { pathParameters: { id: options.id } }),
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}

const ONE = '/v1/broadcasts/{id}';
const api = {
  create: (body: unknown, key?: string) =>
    request(makeCreate(deps), 'POST', '/v1/broadcasts', { body, token: key }),
  list: (query?: Record<string, string>) => request(makeList(deps), 'GET', '/v1/broadcasts', { query }),
  get: (id: string) => request(makeGet(deps), 'GET', ONE, { id }),
  update: (id: string, body: unknown) => request(makeUpdate(deps), 'PATCH', ONE, { id, body }),
  remove: (id: string) => request(makeDelete(deps), 'DELETE', ONE, { id }),
  send: (id: string, body?: unknown) => request(makeSend(deps), 'POST', `${ONE}/send`, { id, body }),
  cancel: (id: string) => request(makeCancel(deps), 'POST', `${ONE}/cancel`, { id }),
  duplicate: (id: string) => request(makeDuplicate(deps), 'POST', `${ONE}/duplicate`, { id }),
  preview: (id: string, body?: unknown) => request(makePreview(deps), 'POST', `${ONE}/preview`, { id, body }),
};

const draftBody = (over: Record<string, unknown> = {}) => ({
  name: 'November news',
  segment_id: segmentId,
  from: 'Acme <news@acme.test>',
  subject: 'Hi {{{contact.first_name|there}}}',
  html: '<p>Hi {{{FIRST_NAME|there}}}, on {{{contact.plan}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
  ...over,
});

async function create(over: Record<string, unknown> = {}): Promise<string> {
  const created = await api.create(draftBody(over));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

function expectRefusal(answer: Answer, status: number, field: string | undefined, message: RegExp) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.name).toBe('validation_error');
  expect(answer.body.message).toMatch(message);
  if (field) expect(answer.body.errors).toContainEqual({ field, message: expect.any(String) });
}

async function seedContact(email: string, over: Partial<Contact> = {}): Promise<Contact> {
  const at = new Date().toISOString();
  const contact: Contact = {
    id: newUuid(),
    email,
    first_name: null,
    last_name: null,
    unsubscribed: false,
    props: {},
    created_at: at,
    updated_at: at,
    ...over,
  };
  for (const Item of [contactItem(contact), contactIdItem(contact)])
    await table.db.send(new PutCommand({ TableName: table.tableName, Item }));
  return contact;
}

describe('broadcasts', () => {
  it("are created as drafts and read back in Resend's shapes (audience_id its older name, one reply-to as a list)", async () => {
    const created = await api.create(draftBody({ reply_to: 'help@acme.test', topic_id: topicId }));
    expect(created.status).toBe(201);
    expectResendShape(created.body, 'CreateBroadcastResponseSuccess');
    const got = await api.get(created.body.id);
    expect(got.status).toBe(200);
    expectResendShape(got.body, 'GetBroadcastResponseSuccess');
    expect(got.body).toEqual({
      object: 'broadcast',
      id: created.body.id,
      name: 'November news',
      audience_id: segmentId,
      segment_id: segmentId,
      from: 'Acme <news@acme.test>',
      subject: 'Hi {{{contact.first_name|there}}}',
      reply_to: ['help@acme.test'],
      status: 'draft',
      created_at: expect.any(String),
      topic_id: topicId,
      html: expect.stringContaining('{{{FIRST_NAME|there}}}'),
      text: null,
      progress: null,
      waiting: null,
    });
    expect(steps).toEqual([]);

    // The deprecated audience_id names the segment; given beside a different segment_id it is refused.
    const byAudience = await api.create({ ...draftBody({ segment_id: undefined }), audience_id: segmentId });
    expect(byAudience.status).toBe(201);
    expect((await api.get(byAudience.body.id)).body.segment_id).toBe(segmentId);
    expectRefusal(
      await api.create({ ...draftBody(), audience_id: newUuid() }),
      400,
      'audience_id',
      /older name/,
    );
    expectRefusal(await api.create(draftBody({ segment_id: undefined })), 400, 'segment_id', /required/);
  });

  it('refuse a segment or topic that does not exist, scheduled_at without send, and bodies over 350 KB', async () => {
    expectRefusal(
      await api.create(draftBody({ segment_id: newUuid() })),
      400,
      'segment_id',
      /does not exist/,
    );
    expectRefusal(await api.create(draftBody({ topic_id: newUuid() })), 400, 'topic_id', /does not exist/);
    expectRefusal(
      await api.create(draftBody({ scheduled_at: 'in 1 hour' })),
      422,
      'scheduled_at',
      /send: true/,
    );
    const big = await api.create(draftBody({ html: 'x'.repeat(200 * 1024), text: 'y'.repeat(160 * 1024) }));
    expectRefusal(big, 422, 'html', /368640 bytes.*at most 358400/);
    expect(steps).toEqual([]);
  });

  it('list newest first in cursor pages, a field with no value left out', async () => {
    const older = await create({ name: 'Older' });
    const newer = await create({ name: 'Newer' });
    const first = await api.list({ limit: '1' });
    expect(first.status).toBe(200);
    expectResendShape(first.body, 'ListBroadcastsResponseSuccess');
    expect(first.body.has_more).toBe(true);
    expect(first.body.data).toEqual([
      {
        id: newer,
        name: 'Newer',
        audience_id: segmentId,
        segment_id: segmentId,
        status: 'draft',
        created_at: expect.any(String),
      },
    ]);
    const next = await api.list({ limit: '100', after: newer });
    expect(next.body.data.map((b: { id: string }) => b.id)).toContain(older);
    expect(next.body.data.map((b: { id: string }) => b.id)).not.toContain(newer);
  });

  it('change a draft only: what is given changes, null removes, a sent one is refused with 403', async () => {
    const id = await create({ topic_id: topicId, preview_text: 'Three things' });
    const updated = await api.update(id, {
      subject: 'New subject',
      topic_id: null,
      reply_to: ['a@acme.test'],
    });
    expect(updated.status).toBe(200);
    expectResendShape(updated.body, 'UpdateBroadcastResponseSuccess');
    const got = (await api.get(id)).body;
    expect(got).toMatchObject({ subject: 'New subject', topic_id: null, reply_to: ['a@acme.test'] });
    expect(got.preview_text).toBe('Three things');
    expectRefusal(await api.update(id, { topic_id: newUuid() }), 400, 'topic_id', /does not exist/);
    expect((await api.send(id)).status).toBe(200);
    expectRefusal(await api.update(id, { subject: 'Too late' }), 403, undefined, /Only a draft.*queued/);
    expect((await api.get(id)).body.subject).toBe('New subject');
    expect((await api.update(newUuid(), { subject: 'x' })).status).toBe(404);
  });

  it('send a draft now: queued, the generation one more, its first fan-out step queued at once; a second send is refused', async () => {
    const id = await create();
    const sent = await api.send(id);
    expect(sent.status).toBe(200);
    expectResendShape(sent.body, 'SendBroadcastResponseSuccess');
    expect(sent.body).toEqual({ object: 'broadcast', id });
    const got = (await api.get(id)).body;
    expect(got.status).toBe('queued');
    expect(got).not.toHaveProperty('scheduled_at');
    expect(steps).toEqual([{ id, generation: 1, delayMs: 0 }]);
    expectRefusal(await api.send(id), 403, undefined, /Only a draft can be sent; this broadcast is queued/);
    expect(steps).toHaveLength(1);
  });

  it('send once when two sends race: one wins, the other is refused, one fan-out step', async () => {
    const id = await create();
    const answers = await Promise.all([api.send(id), api.send(id), api.send(id)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 403, 403]);
    expect(steps).toEqual([{ id, generation: 1, delayMs: 0 }]);
  });

  it('send at a time (ISO or English, as an email): scheduled, its step delayed until then; a past time is refused', async () => {
    const id = await create();
    const sent = await api.send(id, { scheduled_at: 'in 1 hour' });
    expect(sent.status).toBe(200);
    const got = (await api.get(id)).body;
    expect(got.status).toBe('scheduled');
    expectResendShape(got, 'GetBroadcastResponseSuccess');
    const due = Date.parse(got.scheduled_at);
    expect(Math.abs(due - Date.now() - 3_600_000)).toBeLessThan(60_000);
    expect(steps).toEqual([{ id, generation: 1, delayMs: expect.any(Number) }]);
    expect(Math.abs((steps[0]?.delayMs ?? 0) - 3_600_000)).toBeLessThan(60_000);
    const other = await create();
    expectRefusal(
      await api.send(other, { scheduled_at: '2020-01-01T00:00:00Z' }),
      400,
      'scheduled_at',
      /past/,
    );

    // With send: true on creation, at once or at a time.
    const now = await api.create(draftBody({ send: true }));
    expect((await api.get(now.body.id)).body.status).toBe('queued');
    const later = await api.create(
      draftBody({ send: true, scheduled_at: new Date(Date.now() + 7_200_000).toISOString() }),
    );
    expect((await api.get(later.body.id)).body.status).toBe('scheduled');
    expect(steps.slice(1).map((s) => [s.id, s.generation])).toEqual([
      [now.body.id, 1],
      [later.body.id, 1],
    ]);
  });

  it('refuse to send a broadcast that cannot be: an unverified sender, unknown merge tags, no body', async () => {
    const unverified = await create({ from: 'news@pending.test' });
    expectRefusal(await api.send(unverified), 400, 'from', /pending\.test is not verified/);
    const unknownTags = await create({ html: '<p>{{{contact.shoe_size}}} {{{COMPANY}}}</p>' });
    expectRefusal(
      await api.send(unknownTags),
      422,
      'html',
      /\{\{\{contact\.shoe_size\}\}\}, \{\{\{COMPANY\}\}\}/,
    );
    const empty = await create({ html: null });
    expectRefusal(await api.send(empty), 422, 'html', /neither html nor text/);
    expectRefusal(await api.create(draftBody({ html: '{{{NOPE}}}', send: true })), 422, 'html', /NOPE/);
    expect(steps).toEqual([]);
    for (const id of [unverified, unknownTags, empty]) expect((await api.get(id)).body.status).toBe('draft');
  });

  it('stay a draft when the fan-out queue refuses the send (nothing left queued with nothing to move it)', async () => {
    const id = await create();
    queueRefuses = true;
    const sent = await api.send(id);
    expect(sent.status).toBe(500);
    const got = (await api.get(id)).body;
    expect(got.status).toBe('draft');
    queueRefuses = false;
    expect((await api.send(id)).status).toBe(200);
    // The undone send moved the generation on: the new send's step carries a newer one.
    expect(steps).toEqual([{ id, generation: 3, delayMs: 0 }]);
  });

  it("cancel as Resend does: scheduled back to a draft, queued or sending canceled, the generation moved on; a draft's cancel refused", async () => {
    const scheduled = await create();
    await api.send(scheduled, { scheduled_at: 'in 2 hours' });
    const canceled = await api.cancel(scheduled);
    expect(canceled.status).toBe(200);
    expectResendShape(canceled.body, 'CancelBroadcastResponseSuccess');
    const back = (await api.get(scheduled)).body;
    expect(back.status).toBe('draft');
    expect(back).not.toHaveProperty('scheduled_at');
    const stored = await deps.broadcasts.get(scheduled);
    expect(stored.generation).toBe(2);
    expectRefusal(await api.cancel(scheduled), 403, undefined, /this one is draft/);

    // A sending one keeps what the fan-out wrote beside the API's fields.
    const sending = await create();
    await api.send(sending);
    const fanout = {
      cursor: 'c',
      page_at: 1,
      members_before: 1,
      created: 5,
      skipped: { unsubscribed: 1, opted_out: 2 },
      done: false,
    };
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: keys.broadcasts, sk: keys.broadcast(sending) },
        UpdateExpression: 'SET #status = :sending, fanout = :fanout, sent_at = :at',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':sending': 'sending',
          ':fanout': fanout,
          ':at': new Date().toISOString(),
        },
      }),
    );
    expect((await api.cancel(sending)).status).toBe(200);
    const after = (await api.get(sending)).body;
    expectResendShape(after, 'GetBroadcastResponseSuccess');
    expect(after).toMatchObject({
      status: 'canceled',
      sent_at: expect.any(String),
      progress: { created: 5, skipped: { unsubscribed: 1, opted_out: 2 }, done: false },
    });
    expect((await deps.broadcasts.get(sending)).generation).toBe(2);
    expectRefusal(await api.cancel(sending), 403, undefined, /canceled/);
    expect((await api.cancel(newUuid())).status).toBe(404);
  });

  it('delete a draft or a scheduled broadcast (which cancels it); keep a queued one (403)', async () => {
    const draft = await create();
    const removed = await api.remove(draft);
    expect(removed.status).toBe(200);
    expectResendShape(removed.body, 'RemoveBroadcastResponseSuccess');
    expect(removed.body).toEqual({ object: 'broadcast', id: draft, deleted: true });
    expect((await api.get(draft)).status).toBe(404);
    const scheduled = await create();
    await api.send(scheduled, { scheduled_at: 'in 1 day' });
    expect((await api.remove(scheduled)).status).toBe(200);
    expect((await api.get(scheduled)).status).toBe(404);
    const queued = await create();
    await api.send(queued);
    expectRefusal(await api.remove(queued), 403, undefined, /cancel it first/);
    expect((await api.get(queued)).body.status).toBe('queued');
    expect((await api.remove(newUuid())).status).toBe(404);
  });

  it('duplicate any broadcast as a new draft with the same content', async () => {
    const id = await create({ topic_id: topicId, reply_to: ['a@acme.test'], preview_text: 'P', text: 'T' });
    await api.send(id);
    const copy = await api.duplicate(id);
    expect(copy.status).toBe(200);
    expect(copy.body).toEqual({ object: 'broadcast', id: expect.any(String) });
    expect(copy.body.id).not.toBe(id);
    const [source, duplicate] = await Promise.all([api.get(id), api.get(copy.body.id)]);
    const content = ({
      name,
      segment_id,
      from,
      subject,
      reply_to,
      preview_text,
      html,
      text,
      topic_id,
    }: Record<string, unknown>) => ({
      name,
      segment_id,
      from,
      subject,
      reply_to,
      preview_text,
      html,
      text,
      topic_id,
    });
    expect(content(duplicate.body)).toEqual(content(source.body));
    expect(duplicate.body.status).toBe('draft');
    expect((await api.duplicate(newUuid())).status).toBe(404);
  });

  it('show the totals when read, and the broadcast without them when they cannot be', async () => {
    const id = await create();
    totals = {
      sent: 3,
      delivered: 2,
      opened: 4,
      unique_opened: 2,
      clicked: 1,
      unique_clicked: 1,
      bounced: 1,
      complained: 0,
      unsubscribed: 0,
      suppressed: 1,
      ended: 0,
    };
    const got = await api.get(id);
    expectResendShape(got.body, 'GetBroadcastResponseSuccess');
    expect(got.body.totals).toEqual(totals);
    totals = undefined;
    const without = await api.get(id);
    expect(without.status).toBe(200);
    expect(without.body).not.toHaveProperty('totals');
  });

  it('preview for one contact (by address or id), its fallbacks for none, a contact that does not exist refused', async () => {
    const id = await create({ text: 'Plan: {{{contact.plan}}} {{{RESEND_UNSUBSCRIBE_URL}}}' });
    const ada = await seedContact(`ada-${newUuid()}@example.com`, { first_name: 'Ada <3' });
    const byAddress = await api.preview(id, { contact: ada.email });
    expect(byAddress.status).toBe(200);
    expect(byAddress.body).toEqual({
      object: 'broadcast_preview',
      contact_id: ada.id,
      email: ada.email,
      subject: 'Hi Ada <3',
      html: '<p>Hi Ada &lt;3, on free</p><a href="https://mail.acme.test/unsubscribe/preview">Unsubscribe</a>',
      text: 'Plan: free https://mail.acme.test/unsubscribe/preview',
    });
    expect((await api.preview(id, { contact: ada.id })).body.contact_id).toBe(ada.id);
    const sample = await api.preview(id);
    expect(sample.body).toMatchObject({ contact_id: null, email: null, subject: 'Hi there' });
    expectRefusal(await api.preview(id, { contact: 'nobody@example.com' }), 400, 'contact', /not found/);
    expect((await api.preview(newUuid(), {})).status).toBe(404);
  });

  it('need a full-access key', async () => {
    const refused = await api.create(draftBody(), sendingToken);
    expect(refused.status).toBe(403);
    expect(refused.body.name).toBe('restricted_api_key');
  });
});
