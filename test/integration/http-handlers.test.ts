import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoIdempotencyStore } from '../../functions/adapters/dynamodb/idempotency-store.js';
import { DynamoTemplateRepository } from '../../functions/adapters/dynamodb/template-repository.js';
import { verifiedSenderDomains } from '../../functions/domains/domains.js';
import { makeHandler as makeGetAttachment } from '../../functions/handlers/get-attachment.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-email.js';
import { makeHandler as makeListAttachments } from '../../functions/handlers/list-attachments.js';
import { makeHandler as makeList } from '../../functions/handlers/list-emails.js';
import { makeHandler as makeFallback } from '../../functions/handlers/route-not-found.js';
import { makeHandler as makeSend, handler as sendHandler } from '../../functions/handlers/send-email.js';
import { MAX_SEND_REQUEST_BYTES } from '../../functions/shared/limits.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey, MemoryContentStore, RecordingQueue, storeDomain } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let token: string;
let emails: DynamoEmailRepository;
let apiKeys: DynamoApiKeyRepository;
let domains: DynamoDomainRepository;
let queue: RecordingQueue;
let content: MemoryContentStore;
const errors: unknown[][] = [];
const silentLog = {
  info: () => undefined,
  warn: (...args: unknown[]) => void errors.push(args),
  error: (...args: unknown[]) => void errors.push(args),
};

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  domains = new DynamoDomainRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  await storeDomain(domains, 'acme.com', 'verified');
  await storeDomain(domains, 'pending.example', 'pending');
});
afterAll(() => table.stop());
beforeEach(() => {
  queue = new RecordingQueue();
  content = new MemoryContentStore();
  errors.length = 0;
});

const send = (event: ReturnType<typeof httpEvent>) =>
  makeSend({
    apiKeys,
    templates: new DynamoTemplateRepository(table.db, table.tableName),
    emails,
    queue,
    clock: systemClock,
    assertSenderDomain: verifiedSenderDomains(domains, systemClock),
    idempotency: new DynamoIdempotencyStore(table.db, table.tableName),
    content,
    log: silentLog,
  })(event, context()) as Promise<APIGatewayProxyStructuredResultV2>;
const list = (query?: Record<string, string>, t: string | null = token) =>
  makeList({ apiKeys, emails, log: silentLog })(
    httpEvent({ method: 'GET', path: '/v1/emails', token: t, query }),
    context(),
  ) as Promise<APIGatewayProxyStructuredResultV2>;
const get = (id: string, t: string | null = token) =>
  makeGet({ apiKeys, emails, log: silentLog })(
    httpEvent({
      method: 'GET',
      path: `/v1/emails/${id}`,
      routeKey: 'GET /v1/emails/{id}',
      token: t,
      pathParameters: { id },
    }),
    context(),
  ) as Promise<APIGatewayProxyStructuredResultV2>;

const email = {
  from: 'Acme <hello@acme.com>',
  to: 'success@simulator.amazonses.com',
  subject: 'Hi',
  text: 'Hello',
};
const post = (body: unknown, extra: Partial<Parameters<typeof httpEvent>[0]> = {}) =>
  send(httpEvent({ method: 'POST', path: '/v1/emails', token, body, ...extra }));

function expectError(response: APIGatewayProxyStructuredResultV2, statusCode: number, name: string) {
  expect(response.statusCode).toBe(statusCode);
  expect(response.headers?.['content-type']).toMatch(/^application\/json/);
  const body = parseBody(response);
  expect(body).toMatchObject({ statusCode, name, message: expect.any(String) });
  expect(Object.keys(body).filter((k) => k !== 'errors')).toEqual(['statusCode', 'name', 'message']);
  return body;
}

describe('authentication (every endpoint)', () => {
  it('401 missing_api_key without an Authorization header', async () => {
    expectError(await post(email, { token: null }), 401, 'missing_api_key');
    expectError(await list(undefined, null), 401, 'missing_api_key');
    expectError(await get('em_01m80mv90eew9ryfvqd1ksnhes', null), 401, 'missing_api_key');
  });

  it('401 invalid_api_key, with one body, for malformed, unknown and wrongly-schemed keys', async () => {
    const bodies = [];
    for (const headers of [
      { authorization: 'Bearer' },
      { authorization: `Basic ${token}` },
      { authorization: `Bearer ${token}x` },
      { authorization: 'Bearer esk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      { authorization: 'Bearer not-a-key' },
    ]) {
      bodies.push(expectError(await post(email, { token: null, headers }), 401, 'invalid_api_key'));
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(queue.jobs).toHaveLength(0);
  });

  it('accepts the scheme case-insensitively', async () => {
    const response = await post(email, { token: null, headers: { authorization: `bearer ${token}` } });
    expect(response.statusCode).toBe(200);
  });
});

describe('POST /v1/emails', () => {
  it('200 with {id, status: queued, created_at}; stored and enqueued', async () => {
    const response = await post(email);
    expect(response.statusCode).toBe(200);
    const body = parseBody(response);
    expect(Object.keys(body).sort()).toEqual(['created_at', 'id', 'status']);
    expect(body.id).toMatch(/^em_[0-9a-z]{26}$/);
    expect(body.status).toBe('queued');
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(queue.jobs).toEqual([
      { id: body.id, content: expect.objectContaining({ subject: 'Hi', text: 'Hello' }) },
    ]);
    expect(await emails.get(body.id)).toMatchObject({
      id: body.id,
      status: 'queued',
      from: 'Acme <hello@acme.com>',
    });
  });

  it('400 when the sender domain is not a domain of this service, or not verified yet; nothing stored or queued', async () => {
    const unknown = expectError(await post({ ...email, from: 'a@elsewhere.com' }), 400, 'validation_error');
    expect(unknown.message).toContain('elsewhere.com is not verified');
    expect(unknown.errors).toEqual([{ field: 'from', message: unknown.message }]);
    const pending = expectError(
      await post({ ...email, from: 'Acme <a@Pending.Example>' }),
      400,
      'validation_error',
    );
    expect(pending.message).toContain('pending.example is not verified (status: pending)');
    // A subdomain is its own domain: it must be added on its own.
    expectError(await post({ ...email, from: 'a@mail.acme.com' }), 400, 'validation_error');
    expect(queue.jobs).toEqual([]);
  });

  it('400 validation_error listing the offending fields', async () => {
    const body = expectError(
      await post({ from: 'nope', to: [], subject: 'x'.repeat(999), bogus: 1 }),
      400,
      'validation_error',
    );
    expect(body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'bogus',
      'from',
      'subject',
      'to',
    ]);
    expect(queue.jobs).toHaveLength(0);
  });

  it('400 for malformed JSON, a missing body and a non-JSON content type', async () => {
    expect(expectError(await post('{"from": '), 400, 'validation_error').message).toMatch(/not valid JSON/);
    expectError(
      await send(httpEvent({ method: 'POST', path: '/v1/emails', token })),
      400,
      'validation_error',
    );
    expectError(await post('from=a', { headers: { 'content-type': 'text/plain' } }), 400, 'validation_error');
  });

  it('takes a body without Content-Type as JSON', async () => {
    const event = httpEvent({ method: 'POST', path: '/v1/emails', token, body: email });
    delete event.headers['content-type'];
    expect((await send(event)).statusCode).toBe(200);
  });

  it('reads base64-encoded bodies', async () => {
    const event = httpEvent({
      method: 'POST',
      path: '/v1/emails',
      token,
      body: Buffer.from(JSON.stringify(email)).toString('base64'),
    });
    event.isBase64Encoded = true;
    expect((await send(event)).statusCode).toBe(200);
  });

  it('413 payload_too_large over the documented limit (5 MiB: it takes attachments), before looking at the key', async () => {
    const big = { ...email, html: 'x'.repeat(MAX_SEND_REQUEST_BYTES) };
    const body = expectError(await post(big, { token: null }), 413, 'payload_too_large');
    expect(body.message).toContain(String(MAX_SEND_REQUEST_BYTES));
    expect(queue.jobs).toHaveLength(0);
  });

  it('accepts a body just under the limit: its bodies go to the content store, its job stays small', async () => {
    const overhead = JSON.stringify({ ...email, html: '' }).length;
    const html = 'x'.repeat(MAX_SEND_REQUEST_BYTES - overhead);
    const response = await post({ ...email, html });
    expect(response.statusCode).toBe(200);
    const { id } = parseBody(response) as { id: string };
    const key = `bodies/${id}.json`;
    expect(JSON.parse(Buffer.from(content.objects.get(key)?.bytes ?? []).toString())).toEqual({
      html,
      text: 'Hello',
    });
    expect(queue.jobs[0]?.content).toMatchObject({ html: null, text: null, body_key: key });
    // GET shows the email whole, read back from the store.
    const got = await makeGet({ apiKeys, emails, content, log: silentLog })(
      httpEvent({ method: 'GET', path: `/v1/emails/${id}`, token, pathParameters: { id } }),
      context(),
    );
    expect(parseBody(got as APIGatewayProxyStructuredResultV2)).toMatchObject({ id, html, text: 'Hello' });
    expect(parseBody(got as APIGatewayProxyStructuredResultV2)).not.toHaveProperty('body_key');
  });

  it('200 when the queue refuses after the email is stored: it stays queued and unsent, for the sweeper to queue', async () => {
    queue.failWith = new Error('SQS is down: secret internal detail');
    const response = await post(email);
    expect(response.statusCode).toBe(200);
    const { id } = parseBody(response);
    expect(await emails.getState(id)).toMatchObject({ status: 'queued' });
    expect((await emails.getState(id))?.send_started_at).toBeUndefined();
    expect(queue.jobs).toEqual([]);
    // What was logged about the failure carries neither the key nor the message body.
    expect(errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors)).not.toContain(token);
    expect(JSON.stringify(errors)).not.toContain('Hello');
  });

  it('500 internal_server_error without details when the email cannot be stored; nothing is queued', async () => {
    const failing = makeSend({
      apiKeys,
      templates: new DynamoTemplateRepository(table.db, table.tableName),
      emails: Object.assign(Object.create(emails), {
        create: async () => Promise.reject(new Error('DynamoDB is down: secret internal detail')),
      }),
      queue,
      clock: systemClock,
      assertSenderDomain: verifiedSenderDomains(domains, systemClock),
      idempotency: new DynamoIdempotencyStore(table.db, table.tableName),
      log: silentLog,
    });
    const response = (await failing(
      httpEvent({ method: 'POST', path: '/v1/emails', token, body: email }),
      context(),
    )) as APIGatewayProxyStructuredResultV2;
    const body = expectError(response, 500, 'internal_server_error');
    expect(response.body).not.toContain('secret internal detail');
    expect(response.body).not.toMatch(/at .*\.ts/);
    expect(body.errors).toBeUndefined();
    expect(queue.jobs).toEqual([]);
    expect(JSON.stringify(errors)).not.toContain(token);
  });
});

describe('GET /v1/emails', () => {
  it('lists newest first as {object: list, has_more, data}, without bodies', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(parseBody(await post({ ...email, subject: `n${i}` })).id);
    const response = await list({ limit: '2' });
    expect(response.statusCode).toBe(200);
    const body = parseBody(response);
    expect(body.object).toBe('list');
    expect(body.has_more).toBe(true);
    expect(body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    expect(body.data[0]).toEqual({
      object: 'email',
      id: ids[2],
      status: 'queued',
      last_event: 'queued',
      created_at: expect.any(String),
      from: 'Acme <hello@acme.com>',
      to: ['success@simulator.amazonses.com'],
      cc: [],
      bcc: [],
      reply_to: [],
      subject: 'n2',
      scheduled_at: null,
    });
  });

  it('400 for each invalid parameter', async () => {
    const queries: Record<string, string>[] = [
      { limit: '0' },
      { limit: '101' },
      { offset: '-1' },
      { offset: '0.5' },
      { status: 'sent' },
      { after: 'em_01m84wvwt0fv1byr7vaky3md8j', before: 'em_01m84wvwt0fv1byr7vaky3md8j' },
      { after: 'em_01m84wvwt0fv1byr7vaky3md8j', offset: '0' },
      { before: 'key_01m84wvwt0fv1byr7vaky3md8j' },
    ];
    for (const query of queries) {
      expectError(await list(query), 400, 'validation_error');
    }
  });

  it('pages with after and before, as the resend SDK sends them', async () => {
    const first = parseBody(await list({ limit: '2' }));
    const next = parseBody(await list({ limit: '2', after: first.data[1].id }));
    expect(next.data).toHaveLength(2);
    expect(next.data[0].id < first.data[1].id).toBe(true);
    const back = parseBody(await list({ limit: '2', before: next.data[0].id }));
    expect(back.data.map((e: { id: string }) => e.id)).toEqual(first.data.map((e: { id: string }) => e.id));
    expect(back.has_more).toBe(false);
  });
});

describe('POST /v1/emails with tags and headers', () => {
  it('stores them as given, queues them for SES, and GET returns them', async () => {
    const tags = [{ name: 'category', value: 'welcome' }];
    const headers = { 'List-Unsubscribe': '<mailto:u@acme.com>' };
    const response = await post({ ...email, tags, headers });
    expect(response.statusCode).toBe(200);
    const { id } = parseBody(response);
    expect(queue.jobs.at(-1)?.content).toMatchObject({ tags, headers });
    expect(parseBody(await get(id))).toMatchObject({ id, tags, headers, last_event: 'queued' });
  });

  it('refuses a header injection with 400 naming the header, and stores nothing', async () => {
    const response = await post({ ...email, headers: { 'X-Note': 'a\r\nBcc: someone@example.com' } });
    expectError(response, 400, 'validation_error');
    expect(parseBody(response).errors).toEqual([
      { field: 'headers.X-Note', message: expect.stringContaining('line breaks') },
    ]);
    expect(queue.jobs).toHaveLength(0);
  });
});

describe('GET /v1/emails/{id}', () => {
  it('returns the email with its bodies', async () => {
    const { id } = parseBody(await post({ ...email, html: '<p>Hi</p>' }));
    const response = await get(id);
    expect(response.statusCode).toBe(200);
    expect(parseBody(response)).toMatchObject({
      object: 'email',
      id,
      status: 'queued',
      html: '<p>Hi</p>',
      text: 'Hello',
      events: [],
    });
  });

  it('404 not_found for an unknown or malformed id', async () => {
    expectError(await get('em_01m80mv90eew9ryfvqd1ksnhes'), 404, 'not_found');
    expectError(await get('nope'), 404, 'not_found');
    expectError(await get('em_../../x'), 404, 'not_found');
  });
});

describe('a function whose configuration is broken', () => {
  it('still answers 500 in the error shape (no API Gateway default body, no details)', async () => {
    // This test process has no TABLE_NAME: the real handler cannot build its dependencies.
    const response = (await sendHandler(
      httpEvent({ method: 'POST', path: '/v1/emails', token, body: email }),
      context(),
    )) as APIGatewayProxyStructuredResultV2;
    const body = expectError(response, 500, 'internal_server_error');
    expect(body.message).not.toContain('TABLE_NAME');
  });
});

describe('unmatched routes ($default)', () => {
  const call = (method: string, path: string, t: string | null = token) =>
    makeFallback({ apiKeys, log: silentLog })(
      httpEvent({ method, path, routeKey: '$default', token: t }),
      context(),
    ) as Promise<APIGatewayProxyStructuredResultV2>;

  it('authenticates first, like every request: 401 without a valid key', async () => {
    expectError(await call('GET', '/v1/nothing', null), 401, 'missing_api_key');
    expectError(await call('DELETE', '/v1/emails', 'esk_not_a_real_key_at_all'), 401, 'invalid_api_key');
  });

  it('404 not_found for an unknown path', async () => {
    expectError(await call('GET', '/v1/nothing'), 404, 'not_found');
    expectError(await call('GET', '/nothing'), 404, 'not_found');
  });

  it('405 method_not_allowed with Allow for a known path', async () => {
    const response = await call('DELETE', '/v1/emails');
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers?.allow).toBe('POST, GET');
    expect((await call('PUT', '/v1/domains/dom_01m80mv90eew9ryfvqd1ksnhes')).headers?.allow).toBe(
      'GET, PATCH, DELETE',
    );
    expect((await call('POST', '/v1/emails/em_01m80mv90eew9ryfvqd1ksnhes')).headers?.allow).toBe(
      'GET, PATCH',
    );
  });
});

describe("Resend's document", () => {
  it('leaves out what an email does not have yet, rather than null: message_id before SES took it, a body it was sent without', async () => {
    const { id } = parseBody(await post({ ...email, subject: 'text only' }));
    const got = parseBody(await get(id));
    expect(got).toMatchObject({ object: 'email', id, text: 'Hello', last_event: 'queued' });
    expect(got).not.toHaveProperty('message_id');
    expect(got).not.toHaveProperty('html');
    const listed = parseBody(await list({ limit: '100' })).data.find((e: { id: string }) => e.id === id);
    expect(listed).not.toHaveProperty('message_id');
    await emails.claim(id, Date.now());
    await emails.markSent(id, '0100018c-1234-5678-9abc-def012345678-000000', new Date().toISOString());
    expect(parseBody(await get(id)).message_id).toBe('0100018c-1234-5678-9abc-def012345678-000000');
  });

  it(`every email and attachment answer fits its schema: sent or not, html or text only, files inline or not`, async () => {
    const attachmentDeps = { apiKeys, emails, content, clock: systemClock, log: silentLog };
    const sendWith = (body: unknown) => send(httpEvent({ method: 'POST', path: '/v1/emails', token, body }));
    const answers = [
      await sendWith({ ...email, subject: 'text only' }),
      await sendWith({ ...email, text: undefined, html: '<p>html only</p>', subject: 'html only' }),
      await sendWith({
        ...email,
        html: '<p>both</p><img src="cid:logo">',
        subject: 'with files',
        attachments: [
          { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4').toString('base64') },
          { filename: 'logo.png', content: Buffer.from('png').toString('base64'), content_id: 'logo' },
          { filename: 'remote.pdf', path: 'https://files.example.com/remote.pdf' },
        ],
      }),
    ];
    const ids: string[] = [];
    for (const answer of answers) {
      expect(answer.statusCode).toBe(200);
      expectResendShape(parseBody(answer), 'SendEmailResponse');
      ids.push(parseBody(answer).id);
    }
    // One of them sent: it has SES's message id.
    await emails.claim(ids[0] as string, Date.now());
    await emails.markSent(ids[0] as string, 'ses-message-id', new Date().toISOString());
    for (const id of ids) expectResendShape(parseBody(await get(id)), 'Email');
    const listed = parseBody(await list({ limit: '100' }));
    expectResendShape(listed, 'ListEmailsResponse');
    expect(listed.data.some((e: { message_id?: string }) => e.message_id === 'ses-message-id')).toBe(true);

    const withFiles = ids[2] as string;
    const files = parseBody(
      (await makeListAttachments(attachmentDeps)(
        httpEvent({
          method: 'GET',
          path: `/v1/emails/${withFiles}/attachments`,
          routeKey: 'GET /v1/emails/{id}/attachments',
          token,
          pathParameters: { id: withFiles },
        }),
        context(),
      )) as APIGatewayProxyStructuredResultV2,
    );
    expectResendShape(files, 'ListAttachmentsResponse');
    expect(files.data).toHaveLength(3);
    // Not inline: no content_id; given by path and not fetched yet: no size or link either.
    expect(files.data[0]).not.toHaveProperty('content_id');
    expect(files.data[1]).toMatchObject({ content_id: 'logo', content_disposition: 'inline' });
    expect(files.data[2]).not.toHaveProperty('download_url');
    for (const file of files.data) {
      const one = parseBody(
        (await makeGetAttachment(attachmentDeps)(
          httpEvent({
            method: 'GET',
            path: `/v1/emails/${withFiles}/attachments/${file.id}`,
            routeKey: 'GET /v1/emails/{id}/attachments/{attachment_id}',
            token,
            pathParameters: { id: withFiles, attachment_id: file.id },
          }),
          context(),
        )) as APIGatewayProxyStructuredResultV2,
      );
      expectResendShape(one, 'RetrievedAttachment');
      expect(one).toEqual({ ...file, ...(file.expires_at ? { expires_at: expect.any(String) } : {}) });
    }
  });
});
