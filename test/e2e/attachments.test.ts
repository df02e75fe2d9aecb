import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newS3Client } from '../../functions/adapters/s3/client.js';
import { runAs } from '../../local/invocation.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';

/**
 * Attachments through the local service as on AWS: the request's files go to the content bucket
 * (the S3 emulator), the consumer reads them (or fetches a `path`) and hands them to SES in the
 * Simple content's Attachments; the SES emulator keeps what it received, so bytes are compared
 * there; the attachment routes answer presigned links to the same S3.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let files: Server;
let filesUrl: string;
const served = new Map<string, Buffer>();
const requests: string[] = [];

interface StoredMail {
  subject: string;
  messageId: string;
  attachments: {
    filename: string;
    content: string;
    contentType: string;
    contentDisposition?: string;
    contentId?: string;
    size: number;
  }[];
}
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 0,
    sendRetryDelaySeconds: 1,
    rateLimitPerSecond: 1000,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
  expect(domain.status).toBe(201);
  await waitFor(
    () => api.call('POST', `/domains/${domain.json.id}/verify`),
    (r) => r.json?.status === 'verified',
  );
  // A file server on this machine: what an attachment's `path` points at.
  files = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/report.pdf' }).end();
      return;
    }
    if (req.url === '/flaky' && requests.filter((r) => r === '/flaky').length === 1) {
      res.writeHead(503).end('busy');
      return;
    }
    const body = served.get((req.url ?? '').replace(/^\/(flaky)$/, '/report.pdf'));
    if (!body) {
      res.writeHead(404).end('no such file');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/pdf' }).end(body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
}, 30_000);

afterAll(async () => {
  await api?.close();
  await service?.stop();
  files?.closeAllConnections();
  await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
});

const send = (body: Record<string, unknown>) =>
  api.call('POST', '/emails', {
    body: {
      from: 'Acme <billing@acme.test>',
      to: 'success@simulator.amazonses.com',
      text: 'See attached.',
      ...body,
    },
  });
const settled = (id: string) =>
  waitFor(
    () => api.call('GET', `/emails/${id}`),
    (r) => r.json?.status !== 'queued',
    15_000,
  );
const mailTo = async (subject: string) => {
  const store = (await (await fetch(`${service.viewerUrl}/store`)).json()) as { emails: StoredMail[] };
  return store.emails.find((e) => e.subject === subject);
};

describe('attachments on the local service', () => {
  it('sends each wire form of content, byte for byte, and lists them with links that download the same bytes', async () => {
    const pdf = randomBytes(3 * 1024 * 1024); // 3 MB in one request
    const png = randomBytes(2000);
    const csv = Buffer.from('id,total\n1,9.99\n');
    const sent = await send({
      subject: 'Invoice 1',
      html: '<p>Logo: <img src="cid:logo"></p>',
      attachments: [
        { filename: 'invoice.pdf', content: pdf.toString('base64') },
        { filename: 'logo.png', content: [...png], content_id: 'logo' },
        {
          filename: 'totals.csv',
          content: { type: 'Buffer', data: [...csv] },
          content_type: 'text/csv; charset=utf-8',
        },
      ],
    });
    expect(sent.status).toBe(200);
    const email = await settled(sent.json.id);
    expect(email.json).toMatchObject({ status: 'delivered', failure_reason: null });
    // GET /emails/{id} keeps its shape: attachments have their own routes.
    expect(email.json).not.toHaveProperty('attachments');

    const mail = await mailTo('Invoice 1');
    expect(
      mail?.attachments.map((a) => [a.filename, a.contentType, a.contentDisposition, a.contentId]),
    ).toEqual([
      ['invoice.pdf', 'application/pdf', 'ATTACHMENT', undefined],
      ['logo.png', 'image/png', 'INLINE', 'logo'],
      ['totals.csv', 'text/csv; charset=utf-8', 'ATTACHMENT', undefined],
    ]);
    const received = mail?.attachments.map((a) => sha(Buffer.from(a.content, 'base64')));
    expect(received).toEqual([sha(pdf), sha(png), sha(csv)]);

    const list = await api.call('GET', `/emails/${sent.json.id}/attachments`);
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ object: 'list', has_more: false });
    expect(list.json.data).toHaveLength(3);
    expect(list.json.data[1]).toEqual({
      object: 'attachment',
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      filename: 'logo.png',
      size: 2000,
      content_type: 'image/png',
      content_disposition: 'inline',
      content_id: 'logo',
      download_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/.*X-Amz-Signature=/),
      expires_at: expect.any(String),
    });
    const expiresIn = Date.parse(list.json.data[0].expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(59 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000);
    for (const [index, bytes] of [pdf, png, csv].entries()) {
      const download = await fetch(list.json.data[index].download_url);
      expect(download.status).toBe(200);
      expect(sha(new Uint8Array(await download.arrayBuffer()))).toBe(sha(bytes));
    }
    const one = await api.call('GET', `/emails/${sent.json.id}/attachments/${list.json.data[0].id}`);
    expect(one.json).toMatchObject({ object: 'attachment', filename: 'invoice.pdf', size: pdf.length });
    expect((await api.call('GET', `/emails/${sent.json.id}/attachments/nope`)).status).toBe(404);
    expect((await api.call('GET', '/emails/em_0000000000000000000000000a/attachments')).status).toBe(404);
  }, 30_000);

  it('fetches a path when it sends (following a redirect), keeps the file for download, and retries a file server that fails first', async () => {
    const report = randomBytes(150_000);
    served.set('/report.pdf', report);
    const sent = await send({
      subject: 'Report by path',
      attachments: [
        { filename: 'report.pdf', path: `${filesUrl}/redirect` },
        { filename: 'again.pdf', path: `${filesUrl}/flaky` },
      ],
    });
    expect(sent.status).toBe(200);
    expect((await settled(sent.json.id)).json.status).toBe('delivered');
    const mail = await mailTo('Report by path');
    expect(mail?.attachments.map((a) => sha(Buffer.from(a.content, 'base64')))).toEqual([
      sha(report),
      sha(report),
    ]);
    // The flaky server answered 503 once: the email was retried, and sent once.
    expect(requests.filter((r) => r === '/flaky')).toHaveLength(2);
    const list = await api.call('GET', `/emails/${sent.json.id}/attachments`);
    expect(list.json.data.map((a: { size: number }) => a.size)).toEqual([report.length, report.length]);
    const download = await fetch(list.json.data[0].download_url);
    expect(sha(new Uint8Array(await download.arrayBuffer()))).toBe(sha(report));
  }, 30_000);

  it('ends the email failed, naming the attachment, when its path cannot be fetched', async () => {
    const sent = await send({
      subject: 'Missing file',
      attachments: [{ filename: 'gone.pdf', path: `${filesUrl}/gone.pdf` }],
    });
    const email = await settled(sent.json.id);
    expect(email.json.status).toBe('failed');
    expect(email.json.failure_reason).toMatch(/attachment 0 \(gone\.pdf\).*404/);
    expect(await mailTo('Missing file')).toBeUndefined();
  });

  it('refuses bad attachments with a 400 naming each by index, and sends nothing', async () => {
    const bad = await send({
      subject: 'Bad',
      attachments: [
        { filename: '../etc/passwd', content: 'eA==' },
        { filename: 'a.txt' },
        { filename: 'b.txt', content: 'eA==', path: 'https://example.com/b.txt' },
        { filename: 'setup.exe', content: 'eA==' },
        { filename: 'c.txt', content: 'not base64!' },
        { filename: 'd.txt', path: 'http://10.0.0.1/d.txt' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.name).toBe('validation_error');
    const fields = (bad.json.errors as { field: string }[]).map((e) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'attachments.0.filename',
        'attachments.1',
        'attachments.2',
        'attachments.3.filename',
        'attachments.4.content',
      ]),
    );
    const privatePath = await send({
      subject: 'Bad',
      attachments: [{ filename: 'd.txt', path: 'https://10.0.0.1/d.txt' }],
    });
    expect(privatePath.status).toBe(400);
    expect(privatePath.json.errors).toEqual([
      { field: 'attachments.0.path', message: expect.stringMatching(/private address/) },
    ]);
    const batch = await api.call('POST', '/emails/batch', {
      body: [
        {
          from: 'billing@acme.test',
          to: 'success@simulator.amazonses.com',
          subject: 'x',
          text: 'x',
          attachments: [{ filename: 'a.txt', content: 'eA==' }],
        },
      ],
    });
    expect(batch.status).toBe(400);
    expect(batch.json.errors).toEqual([
      { field: '0.attachments', message: expect.stringContaining('not accepted in a batch') },
    ]);
  });

  it('takes a request up to 5 MiB and answers 413 above it', async () => {
    const over = await send({
      subject: 'Too big',
      attachments: [{ filename: 'big.bin', content: randomBytes(4 * 1024 * 1024).toString('base64') }],
    });
    expect(over.status).toBe(413);
    expect(over.json.name).toBe('payload_too_large');
  });

  it('keeps a body larger than a table item in the content store, and shows it whole', async () => {
    const html = `<p>${'x'.repeat(400 * 1024)}</p>`;
    const sent = await send({ subject: 'Large body', html });
    expect(sent.status).toBe(200);
    const email = await settled(sent.json.id);
    expect(email.json.status).toBe('delivered');
    expect(email.json.html).toBe(html);
    expect(email.json).not.toHaveProperty('body_key');
    const mail = (await (await fetch(`${service.viewerUrl}/store`)).json()) as {
      emails: { subject: string; body: { html?: string } }[];
    };
    expect(mail.emails.find((e) => e.subject === 'Large body')?.body.html).toBe(html);

    // The bucket's lifecycle rule deletes the bodies once their days are up: get-email, whose
    // role cannot list the bucket, is answered 403 (as on AWS), and shows the email without them.
    const s3 = new S3Client({
      endpoint: service.endpoints.s3,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'admin', secretAccessKey: 'admin' },
    });
    await s3.send(
      new DeleteObjectCommand({ Bucket: service.contentBucket, Key: `bodies/${sent.json.id}.json` }),
    );
    s3.destroy();
    const expired = await api.call('GET', `/emails/${sent.json.id}`);
    expect(expired.status).toBe(200);
    expect(expired.json).toMatchObject({
      id: sent.json.id,
      status: 'delivered',
      bodies_expired: true,
    });
    expect(expired.json).not.toHaveProperty('html');
    expect(expired.json).not.toHaveProperty('text');
  }, 30_000);

  it("answers a missing object as S3 answers each caller: 403 to a function's role (no s3:ListBucket) and to its download links, 404 to an administrator", async () => {
    const key = `attachments/${'em_0000000000000000000000000'}/missing`;
    const admin = new S3Client({
      endpoint: service.endpoints.s3,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'admin', secretAccessKey: 'admin' },
    });
    const status = (work: Promise<unknown>) =>
      work.then(
        () => 200,
        (error: { $metadata?: { httpStatusCode?: number }; name?: string }) =>
          `${error.$metadata?.httpStatusCode} ${error.name}`,
      );
    expect(await status(admin.send(new GetObjectCommand({ Bucket: service.contentBucket, Key: key })))).toBe(
      '404 NoSuchKey',
    );
    // A client as the functions build theirs (from the environment), used inside their invocations.
    const asFunction = newS3Client();
    expect(
      await runAs('process-send-queue', () =>
        status(asFunction.send(new GetObjectCommand({ Bucket: service.contentBucket, Key: key }))),
      ),
    ).toBe('403 AccessDenied');
    expect(
      await runAs('get-attachment', () =>
        status(asFunction.send(new HeadObjectCommand({ Bucket: service.contentBucket, Key: key }))),
      ),
    ).toMatch(/^403 /); // a HEAD's answer has no body, so no error code
    const link = await runAs('get-attachment', () =>
      getSignedUrl(asFunction, new GetObjectCommand({ Bucket: service.contentBucket, Key: key }), {
        expiresIn: 60,
      }),
    );
    const download = await fetch(link);
    expect(download.status).toBe(403);
    expect(await download.text()).toContain('<Code>AccessDenied</Code>');
    admin.destroy();
    asFunction.destroy();
  });
});
