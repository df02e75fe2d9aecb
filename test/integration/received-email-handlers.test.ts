import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { makeHandler as makeGetAttachment } from '../../functions/handlers/get-received-attachment.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-received-email.js';
import { makeHandler as makeListAttachments } from '../../functions/handlers/list-received-attachments.js';
import { makeHandler as makeList } from '../../functions/handlers/list-received-emails.js';
import {
  receivedAttachmentListSchema,
  receivedAttachmentSchema,
  receivedEmailListSchema,
  receivedEmailSchema,
} from '../../functions/receiving/answers.js';
import { attachmentKey, type ReceivedEmail, rawKey } from '../../functions/receiving/model.js';
import { MAX_ANSWER_BODIES_BYTES } from '../../functions/receiving/reads.js';
import { findRoute } from '../../functions/routes.js';
import { uuidV7Of } from '../../functions/shared/ids.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { MemoryReceivedEmails, MemoryReceivedMail } from '../support/memory-received.js';
import { resendAnswer } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * The receiving routes through their handlers, with API Gateway's events: the API keys in the table
 * (dynalite), the received mail behind in-memory fakes of the concept's ports, seeded as the parser
 * stores it. Each answer is checked against Resend's schema and ours.
 */

type Response = APIGatewayProxyStructuredResultV2;
let table: TestTable;
let apiKeys: DynamoApiKeyRepository;
let token: string;
let received: MemoryReceivedEmails;
let mail: MemoryReceivedMail;
let virusDownloads = false;
const silentLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
});
afterAll(() => table.stop());
beforeEach(() => {
  received = new MemoryReceivedEmails();
  mail = new MemoryReceivedMail();
  virusDownloads = false;
});

const T = Date.parse('2026-11-22T10:00:00.000Z');
const newId = (ms = T) => uuidV7Of(ms, randomBytes(16));
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const PDF = new TextEncoder().encode('%PDF-1.4 invoice');

function receivedEmail(over: Partial<ReceivedEmail> = {}): ReceivedEmail {
  const id = over.id ?? newId();
  return {
    id,
    ses_message_id: `ses-${id.slice(-12)}`,
    created_at: new Date(T).toISOString(),
    from: 'Customer <customer@example.com>',
    to: ['support@acme.com'],
    cc: [],
    bcc: [],
    reply_to: [],
    received_for: ['support@acme.com'],
    subject: 'Re: Your invoice',
    message_id: '<CAF=x7q@mail.example.com>',
    in_reply_to: '<sent-1@email.amazonses.com>',
    references: ['<sent-1@email.amazonses.com>'],
    attachments: [],
    authentication: { spf: 'pass', dkim: 'pass', dmarc: 'unknown' },
    spam: 'pass',
    virus: 'pass',
    size: 2048,
    notified: true,
    ...over,
  };
}

/** An email with an inline image (referred to by the html), a PDF and a non-image part with a content id. */
async function seedWithFiles(over: Partial<ReceivedEmail> = {}) {
  const id = over.id ?? newId();
  const image = {
    id: newId(),
    filename: 'logo.png',
    content_type: 'image/png; name="logo.png"',
    content_id: '<Logo@acme.com>',
    content_disposition: 'inline' as const,
    size: PNG.length,
  };
  const pdf = {
    id: newId(),
    filename: 'invoice.pdf',
    content_type: 'application/pdf',
    content_id: null,
    content_disposition: 'attachment' as const,
    size: PDF.length,
  };
  const script = {
    id: newId(),
    filename: null,
    content_type: 'text/html',
    content_id: 'page@acme.com',
    content_disposition: null,
    size: 5,
  };
  const email = receivedEmail({ id, attachments: [image, pdf, script], ...over });
  await received.store(email);
  await mail.putParsed(id, {
    html: '<p>Hi</p><img src="cid:logo@acme.com"><img src=\'cid:Logo%40acme.com\'><a href="cid:page@acme.com">x</a> cid:logo@acme.com',
    text: 'Hi',
    headers: { subject: 'Re: Your invoice', 'x-mailer': 'Example' },
  });
  await mail.putAttachment(id, image.id, PNG, image.content_type);
  await mail.putAttachment(id, pdf.id, PDF, pdf.content_type);
  await mail.putAttachment(id, script.id, new TextEncoder().encode('<p/>'), script.content_type);
  return { email, image, pdf, script };
}

const deps = () => ({ apiKeys, received, mail, virusDownloads, log: silentLog });

/** A request as API Gateway hands it to the function its route key names (the route table's pick). */
async function call(path: string, query?: Record<string, string>, t = token): Promise<Response> {
  const found = findRoute('GET', path);
  if (!found) throw new Error(`no route for ${path}`);
  const makers: Record<string, typeof makeList> = {
    'list-received-emails': makeList,
    'get-received-email': makeGet as unknown as typeof makeList,
    'list-received-attachments': makeListAttachments as unknown as typeof makeList,
    'get-received-attachment': makeGetAttachment as unknown as typeof makeList,
  };
  const make = makers[found.route.handler];
  if (!make) throw new Error(`${path} goes to ${found.route.handler}`);
  return (await make(deps())(
    httpEvent({
      method: 'GET',
      path,
      routeKey: `GET ${found.route.path}`,
      token: t,
      query,
      pathParameters: Object.keys(found.params).length ? found.params : undefined,
    }),
    context(),
  )) as Response;
}

/**
 * Fits Resend's answer to the route (its document read as OpenAPI 3.1 reads `nullable`, so a null
 * `filename` or `content_disposition` where Resend allows it is no error).
 */
function expectResendShape(body: unknown, path: string) {
  const resend = resendAnswer('GET', path);
  expect(resend, path).toBeDefined();
  expect(resend?.validate(body)).toEqual([]);
}

const ok = <S extends z.ZodMiniType>(response: Response, schema: S) => {
  expect(response.statusCode, response.body).toBe(200);
  const body = parseBody(response);
  const parsed = schema.safeParse(body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  return body;
};

describe('the routes, ranked as API Gateway ranks them', () => {
  it('sends /v1/emails/receiving… to the receiving routes, never to /v1/emails/{id}', () => {
    const id = newId();
    expect(findRoute('GET', '/v1/emails/receiving')?.route.handler).toBe('list-received-emails');
    expect(findRoute('GET', `/v1/emails/receiving/${id}`)?.route.handler).toBe('get-received-email');
    expect(findRoute('GET', `/v1/emails/receiving/${id}/attachments`)?.route.handler).toBe(
      'list-received-attachments',
    );
    expect(findRoute('GET', `/v1/emails/receiving/${id}/attachments/${id}`)?.route.handler).toBe(
      'get-received-attachment',
    );
    // A sent email's routes keep their paths.
    expect(findRoute('GET', '/v1/emails/em_01m80mv90eew9ryfvqd1ksnhes')?.route.handler).toBe('get-email');
    expect(findRoute('GET', '/v1/emails/em_01m80mv90eew9ryfvqd1ksnhes/attachments')?.route.handler).toBe(
      'list-attachments',
    );
  });
});

describe('GET /v1/emails/receiving', () => {
  it('lists newest first in cursor pages, in Resend’s shape with received_for and the verdicts', async () => {
    const ids = [0, 1, 2, 3, 4].map((i) => newId(T + i * 1000));
    for (const id of ids) await received.store(receivedEmail({ id }));
    const first = ok(await call('/v1/emails/receiving', { limit: '2' }), receivedEmailListSchema);
    expectResendShape(first, '/v1/emails/receiving');
    expect(first.data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);
    expect(first.data[0]).toMatchObject({
      received_for: ['support@acme.com'],
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'unknown' },
      spam: 'pass',
      virus: 'pass',
      in_reply_to: '<sent-1@email.amazonses.com>',
    });
    expect(first.data[0]).not.toHaveProperty('html');
    const next = ok(
      await call('/v1/emails/receiving', { limit: '2', after: ids[3] as string }),
      receivedEmailListSchema,
    );
    expect(next.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const back = ok(
      await call('/v1/emails/receiving', { limit: '2', before: ids[2] as string }),
      receivedEmailListSchema,
    );
    expect(back.data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    // Without a limit: 20 at most.
    expect(ok(await call('/v1/emails/receiving'), receivedEmailListSchema).data).toHaveLength(5);
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ after: 'em_01m80mv90eew9ryfvqd1ksnhes' }, 'after'],
    [{ after: newId(), before: newId() }, 'before'],
    [{ offset: '2' }, 'offset'],
  ])('refuses %j with a 400 naming %s', async (query, field) => {
    const response = await call('/v1/emails/receiving', query as Record<string, string>);
    expect(response.statusCode).toBe(400);
    expect(parseBody(response)).toMatchObject({ name: 'validation_error', errors: [{ field }] });
  });

  it('needs a full-access key: a sending key gets 403 on every receiving route', async () => {
    const { key, token: sending } = generateApiKey('sender', 'sending_access', new Date());
    await apiKeys.put(key);
    const { email, pdf } = await seedWithFiles();
    for (const path of [
      '/v1/emails/receiving',
      `/v1/emails/receiving/${email.id}`,
      `/v1/emails/receiving/${email.id}/attachments`,
      `/v1/emails/receiving/${email.id}/attachments/${pdf.id}`,
    ]) {
      const response = await call(path, undefined, sending);
      expect(response.statusCode, path).toBe(403);
      expect(parseBody(response)).toMatchObject({ name: 'restricted_api_key' });
    }
  });
});

describe('GET /v1/emails/receiving/{id}', () => {
  it('answers the email with bodies, headers and a download link of its raw message, in Resend’s shape', async () => {
    const { email } = await seedWithFiles();
    const body = ok(
      await call(`/v1/emails/receiving/${email.id}`, { html_format: 'cid' }),
      receivedEmailSchema,
    );
    expectResendShape(body, '/v1/emails/receiving/{id}');
    expect(body).toMatchObject({
      object: 'email',
      id: email.id,
      text: 'Hi',
      headers: { 'x-mailer': 'Example' },
      raw: { download_url: expect.stringContaining('response-content-disposition=attachment') },
    });
    expect(mail.links).toEqual([
      { key: rawKey(email.ses_message_id), filename: `${email.id}.eml`, expiresInSeconds: 3600 },
    ]);
    expect(body.raw.expires_at).toBe('2026-11-22T13:00:00.000Z');
    // `cid` keeps the message's references, and reads no attachment.
    expect(body.html).toContain('src="cid:logo@acme.com"');
    expect(mail.attachmentReads).toEqual([]);
    // An attachment without a Content-ID shows none (Resend types it a string).
    expect(body.attachments[1]).not.toHaveProperty('content_id');
    expect(body.attachments[0].content_id).toBe('<Logo@acme.com>');
  });

  it('html_format=data_uri (the default) shows inline images as data: URIs of their attachment, and nothing else', async () => {
    const { email, image } = await seedWithFiles();
    for (const query of [undefined, { html_format: 'data_uri' }]) {
      mail.attachmentReads.length = 0;
      const body = ok(await call(`/v1/emails/receiving/${email.id}`, query), receivedEmailSchema);
      const uri = `data:image/png;base64,${Buffer.from(PNG).toString('base64')}`;
      // Both references to the image (its Content-ID's case and %-escapes aside), in src attributes.
      expect(body.html).toBe(
        `<p>Hi</p><img src="${uri}"><img src='${uri}'><a href="cid:page@acme.com">x</a> cid:logo@acme.com`,
      );
      // Only the image referred to was read, once; the text/html part with a content id is not inlined.
      expect(mail.attachmentReads).toEqual([`${email.id}/${image.id}`]);
    }
  });

  it('keeps cid: references beyond the size an answer can carry', async () => {
    const big = {
      id: newId(),
      filename: 'big.png',
      content_type: 'image/png',
      content_id: 'big@x',
      content_disposition: 'inline' as const,
      size: MAX_ANSWER_BODIES_BYTES,
    };
    const email = receivedEmail({ attachments: [big] });
    await received.store(email);
    await mail.putParsed(email.id, { html: '<img src="cid:big@x">', text: null, headers: {} });
    const body = ok(await call(`/v1/emails/receiving/${email.id}`), receivedEmailSchema);
    expect(body.html).toBe('<img src="cid:big@x">');
    expect(mail.attachmentReads).toEqual([]);
  });

  it('leaves out bodies too large for one answer (Lambda answers at most 6 MB), and says so: the raw message has them', async () => {
    const email = receivedEmail();
    await received.store(email);
    // Quotes are escaped twice in the function's answer (the body, then the proxy result): 2 MB of them are 6 MB.
    await mail.putParsed(email.id, { html: '"'.repeat(2 * 1024 * 1024), text: 'short', headers: { a: 'b' } });
    const body = ok(await call(`/v1/emails/receiving/${email.id}`), receivedEmailSchema);
    expectResendShape(body, '/v1/emails/receiving/{id}');
    expect(body).toMatchObject({ html: null, text: null, headers: { a: 'b' }, bodies_too_large: true });
    expect(body.raw.download_url).toEqual(expect.any(String));
    // Just under it: all there.
    await mail.putParsed(email.id, { html: '<p>x</p>'.repeat(100_000), text: 'short', headers: {} });
    const whole = ok(await call(`/v1/emails/receiving/${email.id}`), receivedEmailSchema);
    expect(whole.html).toHaveLength(800_000);
    expect(whole).not.toHaveProperty('bodies_too_large');
  });

  it('refuses an html_format it does not know', async () => {
    const { email } = await seedWithFiles();
    const response = await call(`/v1/emails/receiving/${email.id}`, { html_format: 'inline' });
    expect(response.statusCode).toBe(400);
    expect(parseBody(response)).toMatchObject({
      name: 'validation_error',
      errors: [{ field: 'html_format' }],
    });
  });

  it('answers 404 in the one error shape for an unknown id, and for one that is not a UUID without a read', async () => {
    const unknown = await call(`/v1/emails/receiving/${newId()}`);
    expect(unknown.statusCode).toBe(404);
    expect(parseBody(unknown)).toMatchObject({ statusCode: 404, name: 'not_found' });
    received.reads.length = 0;
    for (const id of ['em_01m80mv90eew9ryfvqd1ksnhes', 'not-a-uuid', '019ab2c4-7d1e-7a3f-9c2b-5e8d0f1a2b3']) {
      const response = await call(`/v1/emails/receiving/${id}`);
      expect(response.statusCode, id).toBe(404);
      expect(parseBody(response)).toMatchObject({ statusCode: 404, name: 'not_found' });
    }
    expect(received.reads).toEqual([]);
  });

  it('mail SES flagged as a virus: raw null and no image inlined, unless the operator allows its downloads', async () => {
    const { email } = await seedWithFiles({ virus: 'fail' });
    const body = ok(await call(`/v1/emails/receiving/${email.id}`), receivedEmailSchema);
    expectResendShape(body, '/v1/emails/receiving/{id}');
    expect(body).toMatchObject({ virus: 'fail', raw: null });
    expect(body.html).toContain('src="cid:logo@acme.com"');
    expect(mail.links).toEqual([]);
    expect(mail.attachmentReads).toEqual([]);
    virusDownloads = true;
    const allowed = ok(await call(`/v1/emails/receiving/${email.id}`), receivedEmailSchema);
    expect(allowed.raw.download_url).toContain(
      encodeURIComponent(rawKey(email.ses_message_id)).replaceAll('%2F', '/'),
    );
    expect(allowed.html).toContain('data:image/png;base64,');
  });
});

describe('GET /v1/emails/receiving/{id}/attachments[/{attachment_id}]', () => {
  it('lists the attachments in the message’s order, each with a download link, all or a page', async () => {
    const { email, image, pdf, script } = await seedWithFiles();
    const all = ok(await call(`/v1/emails/receiving/${email.id}/attachments`), receivedAttachmentListSchema);
    expectResendShape(all, '/v1/emails/receiving/{id}/attachments');
    expect(all.has_more).toBe(false);
    expect(all.data.map((a: { id: string }) => a.id)).toEqual([image.id, pdf.id, script.id]);
    expect(all.data[1]).toEqual({
      object: 'attachment',
      id: pdf.id,
      filename: 'invoice.pdf',
      content_type: 'application/pdf',
      content_disposition: 'attachment',
      size: PDF.length,
      download_url: expect.stringContaining('response-content-disposition=attachment'),
      expires_at: '2026-11-22T13:00:00.000Z',
    });
    expect(mail.links.map((l) => l.key)).toEqual(
      [image, pdf, script].map((a) => attachmentKey(email.id, a.id)),
    );
    expect(mail.links.map((l) => l.filename)).toEqual(['logo.png', 'invoice.pdf', script.id]);
    const page = ok(
      await call(`/v1/emails/receiving/${email.id}/attachments`, { limit: '1', after: image.id }),
      receivedAttachmentListSchema,
    );
    expect(page).toMatchObject({ has_more: true, data: [{ id: pdf.id }] });
    const before = ok(
      await call(`/v1/emails/receiving/${email.id}/attachments`, { limit: '5', before: script.id }),
      receivedAttachmentListSchema,
    );
    expect(before).toMatchObject({ has_more: false, data: [{ id: image.id }, { id: pdf.id }] });
    const stranger = await call(`/v1/emails/receiving/${email.id}/attachments`, { after: newId() });
    expect(stranger.statusCode).toBe(400);
  });

  it('answers one attachment in Resend’s shape, and 404 for an unknown or malformed id', async () => {
    const { email, pdf } = await seedWithFiles();
    const one = ok(
      await call(`/v1/emails/receiving/${email.id}/attachments/${pdf.id}`),
      receivedAttachmentSchema,
    );
    expectResendShape(one, '/v1/emails/receiving/{id}/attachments/{attachment_id}');
    expect(one).toMatchObject({ object: 'attachment', id: pdf.id, download_url: expect.any(String) });
    for (const path of [
      `/v1/emails/receiving/${email.id}/attachments/${newId()}`,
      `/v1/emails/receiving/${email.id}/attachments/nope`,
      `/v1/emails/receiving/${newId()}/attachments/${pdf.id}`,
      `/v1/emails/receiving/nope/attachments`,
    ]) {
      const response = await call(path);
      expect(response.statusCode, path).toBe(404);
      expect(parseBody(response)).toMatchObject({ statusCode: 404, name: 'not_found' });
    }
  });

  it('mail SES flagged as a virus: its attachments are listed without a link, unless the operator allows it', async () => {
    const { email, pdf } = await seedWithFiles({ virus: 'fail' });
    const list = ok(await call(`/v1/emails/receiving/${email.id}/attachments`), receivedAttachmentListSchema);
    expectResendShape(list, '/v1/emails/receiving/{id}/attachments');
    for (const a of list.data) {
      expect(a).not.toHaveProperty('download_url');
      expect(a).not.toHaveProperty('expires_at');
    }
    const one = ok(
      await call(`/v1/emails/receiving/${email.id}/attachments/${pdf.id}`),
      receivedAttachmentSchema,
    );
    expect(one).not.toHaveProperty('download_url');
    expect(mail.links).toEqual([]);
    virusDownloads = true;
    const allowed = ok(
      await call(`/v1/emails/receiving/${email.id}/attachments/${pdf.id}`),
      receivedAttachmentSchema,
    );
    expect(allowed.download_url).toContain(attachmentKey(email.id, pdf.id));
  });
});
