import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Resend } from 'resend';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoReceivedEmailRepository } from '../../functions/adapters/dynamodb/received-emails.js';
import { S3ReceivedMailStore } from '../../functions/adapters/s3/received-mail.js';
import { receivedAttachmentListSchema, receivedEmailSchema } from '../../functions/receiving/answers.js';
import { type ReceivedEmail, rawKey } from '../../functions/receiving/model.js';
import { uuidV7Of } from '../../functions/shared/ids.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';

/**
 * The official SDK's receiving calls, unchanged, against the local service over HTTPS: a received
 * email seeded through the concept's ports (the table's repository and the content bucket's store,
 * as the parser leaves them), then read with `emails.receiving.list`, `get` (both html formats),
 * `attachments.list` and `attachments.get`, whose links download the very bytes, as attachments.
 */
let service: LocalService;
let resend: Resend;
let agent: Agent;
const realFetch = globalThis.fetch;

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...randomBytes(40)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(3000)]);
const id = uuidV7Of(Date.now(), randomBytes(16));
const imageId = uuidV7Of(Date.now(), randomBytes(16));
const pdfId = uuidV7Of(Date.now(), randomBytes(16));
const sesMessageId = `local${randomBytes(8).toString('hex')}`;
const RAW = Buffer.from(
  [
    'From: Customer <customer@example.com>',
    'To: support@acme.test',
    'Subject: Re: Your invoice',
    'Message-ID: <CAF=x7q@mail.example.com>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Hi</p><img src="cid:logo@acme.test">',
    '--b1',
    'Content-Type: image/png',
    'Content-ID: <logo@acme.test>',
    'Content-Disposition: inline; filename="logo.png"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(PNG).toString('base64'),
    '--b1',
    'Content-Type: application/pdf',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    PDF.toString('base64'),
    '--b1--',
    '',
  ].join('\r\n'),
);

beforeAll(async () => {
  service = await startLocalService({ port: 0, dataDir: null, viewerPort: 0, rateLimitPerSecond: 1000 });
  agent = new Agent({ connect: { ca: service.certificate } });
  // The SDK calls the global fetch (the API, and its download of the raw message): trust the local certificate.
  globalThis.fetch = ((url: string, init?: object) =>
    undiciFetch(url, { ...init, dispatcher: agent })) as unknown as typeof fetch;
  resend = new Resend(service.apiKey, { baseUrl: service.baseUrl });

  // What the parser leaves: the raw message, its bodies and headers, each attachment, and the item.
  const admin = new S3Client({
    endpoint: service.endpoints.s3,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'admin', secretAccessKey: 'admin' },
  });
  await admin.send(
    new PutObjectCommand({ Bucket: service.contentBucket, Key: rawKey(sesMessageId), Body: RAW }),
  );
  const mail = new S3ReceivedMailStore(admin, service.contentBucket);
  await mail.putParsed(id, {
    html: '<p>Hi</p><img src="cid:logo@acme.test">',
    text: null,
    headers: { subject: 'Re: Your invoice' },
  });
  await mail.putAttachment(id, imageId, PNG, 'image/png');
  await mail.putAttachment(id, pdfId, PDF, 'application/pdf');
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: service.endpoints.dynamodb,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  const email: ReceivedEmail = {
    id,
    ses_message_id: sesMessageId,
    created_at: new Date().toISOString(),
    from: 'Customer <customer@example.com>',
    to: ['support@acme.test'],
    cc: [],
    bcc: [],
    reply_to: [],
    received_for: ['support@acme.test'],
    subject: 'Re: Your invoice',
    message_id: '<CAF=x7q@mail.example.com>',
    in_reply_to: null,
    references: [],
    attachments: [
      {
        id: imageId,
        filename: 'logo.png',
        content_type: 'image/png',
        content_id: '<logo@acme.test>',
        content_disposition: 'inline',
        size: PNG.length,
      },
      {
        id: pdfId,
        filename: 'invoice.pdf',
        content_type: 'application/pdf',
        content_id: null,
        content_disposition: 'attachment',
        size: PDF.length,
      },
    ],
    authentication: { spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' },
    spam: 'unknown',
    virus: 'unknown',
    size: RAW.length,
    notified: true,
  };
  await new DynamoReceivedEmailRepository(db, service.tableName).store(email);
  admin.destroy();
  db.destroy();
}, 60_000);

afterAll(async () => {
  globalThis.fetch = realFetch;
  await agent?.close();
  await service?.stop();
});

const download = async (url: string) => {
  const response = await undiciFetch(url, { dispatcher: agent });
  return {
    status: response.status,
    // What S3 answers the download with (S3's GetObject response-content-disposition; the local S3
    // ignores it, so the link's own parameter is what is checked).
    disposition: new URL(url).searchParams.get('response-content-disposition'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
};

describe("the official SDK's emails.receiving, unchanged, against the local service", () => {
  it('lists it, and is not taken for a sent email: /v1/emails/receiving ranks before /v1/emails/{id}', async () => {
    const { data, error } = await resend.emails.receiving.list({ limit: 10 });
    expect(error).toBeNull();
    expect(data?.data.map((e) => e.id)).toContain(id);
    expect(data?.data.find((e) => e.id === id)).toMatchObject({ received_for: ['support@acme.test'] });
  });

  it('gets it with inline images as data: URIs by default, as cid: on asking, and a raw message to download', async () => {
    const { data, error } = await resend.emails.receiving.get(id);
    expect(error).toBeNull();
    expect(receivedEmailSchema.safeParse(data).success).toBe(true);
    expect(data?.html).toBe(
      `<p>Hi</p><img src="data:image/png;base64,${Buffer.from(PNG).toString('base64')}">`,
    );
    const raw = await download(data?.raw?.download_url as string);
    expect(raw.status).toBe(200);
    expect(raw.disposition).toBe(`attachment; filename*=UTF-8''${id}.eml`);
    expect(raw.bytes.equals(RAW)).toBe(true);
    expect(Date.parse(data?.raw?.expires_at as string)).toBeGreaterThan(Date.now() + 50 * 60_000);
    const cid = await resend.emails.receiving.get(id, { html_format: 'cid' });
    expect(cid.data?.html).toBe('<p>Hi</p><img src="cid:logo@acme.test">');
  });

  it('lists and gets its attachments, whose links download the same bytes as a download', async () => {
    const list = await resend.emails.receiving.attachments.list({ emailId: id });
    expect(list.error).toBeNull();
    expect(receivedAttachmentListSchema.safeParse(list.data).success).toBe(true);
    expect(list.data?.data.map((a) => a.id)).toEqual([imageId, pdfId]);
    const one = await resend.emails.receiving.attachments.get({ emailId: id, id: pdfId });
    expect(one.error).toBeNull();
    const file = await download(one.data?.download_url as string);
    expect(file.status).toBe(200);
    expect(file.disposition).toBe(`attachment; filename*=UTF-8''invoice.pdf`);
    expect(file.bytes.equals(PDF)).toBe(true);
    const image = await download(list.data?.data[0]?.download_url as string);
    expect(Buffer.from(PNG).equals(image.bytes)).toBe(true);
  });

  it('forwards it with forward(), passthrough and wrapped, through the send path', async () => {
    const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
    const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    await waitFor(
      () => api.call('POST', `/domains/${domain.json.id}/verify`),
      (r) => r.json?.status === 'verified',
    );
    const to = 'success@simulator.amazonses.com';
    const passthrough = await resend.emails.receiving.forward({ emailId: id, to, from: 'fwd@acme.test' });
    expect(passthrough.error).toBeNull();
    const wrapped = await resend.emails.receiving.forward({
      emailId: id,
      to,
      from: 'fwd@acme.test',
      passthrough: false,
      text: 'See below.',
    });
    expect(wrapped.error).toBeNull();
    const sent = await api.call('GET', `/emails/${passthrough.data?.id}`);
    expect(sent.json).toMatchObject({
      subject: 'Re: Your invoice',
      html: expect.stringMatching(/^<p>Hi<\/p><img src="cid:logo@acme.test">\s*$/),
    });
    const files = await api.call('GET', `/emails/${passthrough.data?.id}/attachments`);
    expect(files.json.data.map((a: { filename: string }) => a.filename)).toEqual(['logo.png', 'invoice.pdf']);
    const eml = await api.call('GET', `/emails/${wrapped.data?.id}/attachments`);
    expect(eml.json.data).toMatchObject([
      { filename: 'forwarded_message.eml', content_type: 'message/rfc822' },
    ]);
    const forwarded = await download(eml.json.data[0].download_url);
    expect(forwarded.bytes.equals(RAW)).toBe(true);
    await api.close();
  }, 60_000);

  it("gives forward() of a message too large for the send API that limit's 413, in both modes", async () => {
    // 4 MB of attachment: as base64 in a send's JSON body, 5.3 MB, over POST /v1/emails' 5 MiB.
    const big = randomBytes(4 * 1024 * 1024);
    const bigId = uuidV7Of(Date.now(), randomBytes(16));
    const bigSesId = `local${randomBytes(8).toString('hex')}`;
    const bigRaw = Buffer.from(
      [
        'From: Customer <customer@example.com>',
        'To: support@acme.test',
        'Subject: A large scan',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b2"',
        '',
        '--b2',
        'Content-Type: text/plain',
        '',
        'The scan is attached.',
        '--b2',
        'Content-Type: application/octet-stream',
        'Content-Disposition: attachment; filename="scan.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        big.toString('base64').replace(/.{76}/g, '$&\r\n'),
        '--b2--',
        '',
      ].join('\r\n'),
    );
    const admin = new S3Client({
      endpoint: service.endpoints.s3,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'admin', secretAccessKey: 'admin' },
    });
    await admin.send(
      new PutObjectCommand({ Bucket: service.contentBucket, Key: rawKey(bigSesId), Body: bigRaw }),
    );
    await new S3ReceivedMailStore(admin, service.contentBucket).putParsed(bigId, {
      html: null,
      text: 'The scan is attached.',
      headers: { subject: 'A large scan' },
    });
    admin.destroy();
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: service.endpoints.dynamodb,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
    await new DynamoReceivedEmailRepository(db, service.tableName).store({
      id: bigId,
      ses_message_id: bigSesId,
      created_at: new Date().toISOString(),
      from: 'Customer <customer@example.com>',
      to: ['support@acme.test'],
      cc: [],
      bcc: [],
      reply_to: [],
      received_for: ['support@acme.test'],
      subject: 'A large scan',
      message_id: '<scan@mail.example.com>',
      in_reply_to: null,
      references: [],
      attachments: [],
      authentication: { spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' },
      spam: 'unknown',
      virus: 'unknown',
      size: bigRaw.length,
      notified: true,
    });
    db.destroy();
    const to = 'success@simulator.amazonses.com';
    const passthrough = await resend.emails.receiving.forward({ emailId: bigId, to, from: 'fwd@acme.test' });
    expect(passthrough.data).toBeNull();
    expect(passthrough.error).toMatchObject({ statusCode: 413 });
    const wrapped = await resend.emails.receiving.forward({
      emailId: bigId,
      to,
      from: 'fwd@acme.test',
      passthrough: false,
      text: 'See below.',
    });
    expect(wrapped.data).toBeNull();
    expect(wrapped.error).toMatchObject({ statusCode: 413 });
  }, 60_000);

  it('answers 404 in the one error shape for an id that is not one', async () => {
    const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
    for (const path of [
      `/emails/receiving/${uuidV7Of(Date.now(), randomBytes(16))}`,
      '/emails/receiving/nope',
    ]) {
      const response = await api.call('GET', path);
      expect(response.status, path).toBe(404);
      expect(response.json).toMatchObject({ statusCode: 404, name: 'not_found' });
    }
    await api.close();
  });
});
