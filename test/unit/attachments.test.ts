import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedHttp } from '../../functions/adapters/http/guarded-http.js';
import {
  attachmentId,
  decodeContent,
  encodedBytes,
  MAX_ATTACHMENTS,
  storedAttachments,
  type TypedAttachment,
  withContentTypes,
} from '../../functions/emails/attachments.js';
import { contentTypeOf } from '../../functions/emails/content-types.js';
import {
  MAX_HEADERS,
  MAX_RECIPIENTS,
  MAX_TAGS,
  sendEmailSchema,
  toContent,
} from '../../functions/emails/email.js';
import { JOB_INLINE_MAX_BYTES, parseSendJob, toQueueMessage } from '../../functions/emails/send-job.js';
import { parseInput } from '../../functions/http/middleware.js';
import type { ApiError } from '../../functions/shared/errors.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { FetchError } from '../../functions/shared/ports.js';

const email = (attachments: unknown) => ({
  from: 'billing@acme.com',
  to: 'a@example.com',
  subject: 'Invoice',
  text: 'Attached.',
  attachments,
});
const errorsOf = (attachments: unknown) => {
  try {
    parseInput(sendEmailSchema, email(attachments));
  } catch (error) {
    return (error as ApiError).fieldErrors;
  }
  throw new Error('expected a validation error');
};

describe('attachments: what POST /v1/emails takes', () => {
  it('reads content in each wire form the official SDKs send, to the same bytes', () => {
    const bytes = [0, 1, 2, 250, 255];
    const forms = [
      Buffer.from(bytes).toString('base64'), // cURL, the Node docs
      bytes, // Python's list(f.read()), Ruby's file.bytes
      { type: 'Buffer', data: bytes }, // what JSON.stringify writes for a Node Buffer
      `${Buffer.from(bytes).toString('base64').slice(0, 4)}\n${Buffer.from(bytes).toString('base64').slice(4)}`, // wrapped base64
    ];
    for (const content of forms) {
      const input = parseInput(sendEmailSchema, email([{ filename: 'a.bin', content }]));
      expect([...(input.attachments?.[0]?.content ?? [])]).toEqual(bytes);
    }
    expect(decodeContent('')).toEqual(new Uint8Array());
  });

  it('defaults the content type from the extension, office formats included, and keeps a given one', () => {
    expect(contentTypeOf('invoice.pdf')).toBe('application/pdf');
    expect(contentTypeOf('Report.XLSX')).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(contentTypeOf('letter.docx')).toBe(
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(contentTypeOf('photo.jpg')).toBe('image/jpeg');
    expect(contentTypeOf('event.ics')).toBe('text/calendar');
    expect(contentTypeOf('data.csv')).toBe('text/csv');
    expect(contentTypeOf('no-extension')).toBe('application/octet-stream');
    expect(contentTypeOf('archive.unknownext')).toBe('application/octet-stream');
    const input = parseInput(
      sendEmailSchema,
      email([{ filename: 'a.txt', content: 'eA==', content_type: 'text/plain; charset=utf-8' }]),
    );
    expect(input.attachments?.[0]?.content_type).toBe('text/plain; charset=utf-8');
  });

  it("gives an attachment without a content type its filename's, when the email is stored", async () => {
    const input = parseInput(
      sendEmailSchema,
      email([
        { filename: 'a.txt', content: 'eA==', content_type: 'text/plain; charset=utf-8' },
        { filename: 'invoice.pdf', content: 'eA==' },
        { filename: 'README', content: 'eA==' },
      ]),
    );
    // Not at parse time (the MIME table is loaded on first use, emails/content-types.ts) …
    expect(input.attachments?.[1]).not.toHaveProperty('content_type');
    // … but before anything is stored.
    expect((await withContentTypes(input.attachments ?? [])).map((a) => a.content_type)).toEqual([
      'text/plain; charset=utf-8',
      'application/pdf',
      'application/octet-stream',
    ]);
  });

  it('makes a file with a content_id inline, and any other an attachment', async () => {
    const input = parseInput(
      sendEmailSchema,
      email([
        { filename: 'logo.png', content: 'eA==', content_id: 'logo' },
        { filename: 'a.pdf', path: 'https://files.example.com/a.pdf' },
      ]),
    );
    const id = newEmailId();
    const stored = storedAttachments(id, await withContentTypes(input.attachments ?? []));
    expect(stored).toEqual([
      {
        id: attachmentId(id, 0),
        filename: 'logo.png',
        content_type: 'image/png',
        content_disposition: 'inline',
        content_id: 'logo',
        size: 1,
      },
      {
        id: attachmentId(id, 1),
        filename: 'a.pdf',
        content_type: 'application/pdf',
        content_disposition: 'attachment',
        content_id: null,
        size: null,
        path: 'https://files.example.com/a.pdf',
      },
    ]);
    // The same email and position give the same id (a resumed request puts the same objects).
    expect(attachmentId(id, 1)).toBe(stored[1]?.id);
    expect(attachmentId(id, 0)).not.toBe(attachmentId(id, 1));
  });

  it('refuses each bad attachment by index: no content or path, both, path-like or control-character names, refused types, bad content', () => {
    const errors = errorsOf([
      { filename: 'ok.txt', content: 'eA==' },
      { filename: 'a.txt' },
      { filename: 'b.txt', content: 'eA==', path: 'https://example.com/b' },
      { filename: '../x' },
      { filename: 'dir\\x.txt', content: 'eA==' },
      { filename: 'bad\u0000name.txt', content: 'eA==' },
      { filename: '', content: 'eA==' },
      { filename: 'setup.EXE', content: 'eA==' },
      { filename: 'c.txt', content: 'not base64!' },
      { filename: 'd.txt', content: [1, 256] },
      { filename: 'e.txt', content: 'eA==', content_type: 'text/plain\r\nX-Injected: 1' },
      { filename: 'f.txt', content: 'eA==', content_id: '<f>' },
      { filename: 'g.txt', content: 'eA==', disposition: 'inline' },
      'not an object',
    ]);
    const byField = Object.fromEntries((errors ?? []).map((e) => [e.field, e.message]));
    expect(byField['attachments.0']).toBeUndefined();
    expect(byField['attachments.1']).toMatch(/attachment 1: needs content or path/);
    expect(byField['attachments.2']).toMatch(/either content or path, not both/);
    expect(byField['attachments.3.filename']).toMatch(/not a path/);
    expect(byField['attachments.4.filename']).toMatch(/not a path/);
    expect(byField['attachments.5.filename']).toMatch(/control characters/);
    expect(byField['attachments.6.filename']).toMatch(/must not be empty/);
    expect(byField['attachments.7.filename']).toMatch(/\.exe file, a type SES does not send/);
    expect(byField['attachments.8.content']).toMatch(/base64/);
    expect(byField['attachments.9.content']).toMatch(/item 1 is not one/);
    expect(byField['attachments.10.content_type']).toMatch(/MIME type/);
    expect(byField['attachments.11.content_id']).toMatch(/without spaces, <, >/);
    expect(byField['attachments.12.disposition']).toMatch(/unknown field "disposition"/);
    expect(byField['attachments.13']).toMatch(/must be an object/);
    expect(
      errorsOf(Array.from({ length: MAX_ATTACHMENTS + 1 }, () => ({ filename: 'a.txt', content: '' }))),
    ).toEqual([{ field: 'attachments', message: `attachments may list at most ${MAX_ATTACHMENTS} files` }]);
    expect(
      errorsOf([
        { filename: 'a.png', content: 'eA==', content_id: 'x' },
        { filename: 'b.png', content: 'eA==', content_id: 'x' },
      ]),
    ).toEqual([
      { field: 'attachments.1.content_id', message: 'attachment 1: content_id "x" is given twice' },
    ]);
  });

  it('counts a file as SES does once it is encoded: base64 in lines of 76', () => {
    expect(encodedBytes(0)).toBe(0);
    expect(encodedBytes(3)).toBe(4 + 2);
    expect(encodedBytes(57)).toBe(76 + 2);
    expect(encodedBytes(30 * 1024 * 1024)).toBeGreaterThan(40 * 1024 * 1024);
  });
});

describe('the send job: references, never content that could outgrow the queue', () => {
  const widest = () => {
    // The largest email POST /v1/emails accepts with its bodies in the table and its files as
    // references: every list at its limit, every field at its longest (4-byte characters where
    // allowed), every attachment a path URL of 2,048 characters.
    const name = '𝔄'.repeat(60);
    const address = (i: number) => `"${name}" <${'a'.repeat(40)}${i}@${'b'.repeat(60)}.example.com>`;
    const recipients = Array.from({ length: MAX_RECIPIENTS }, (_, i) => address(i));
    const input = parseInput(sendEmailSchema, {
      from: address(99),
      to: recipients.slice(0, 20),
      cc: recipients.slice(20, 35),
      bcc: recipients.slice(35),
      reply_to: recipients.slice(0, 10),
      subject: '𝔄'.repeat(998),
      html: 'x'.repeat(200 * 1024),
      text: 'y'.repeat(50 * 1024),
      tags: Array.from({ length: MAX_TAGS }, (_, i) => ({
        name: `t${i}${'n'.repeat(250)}`,
        value: 'v'.repeat(256),
      })),
      headers: Object.fromEntries(
        Array.from({ length: MAX_HEADERS }, (_, i) => [`X-H${i}${'h'.repeat(120)}`, 'v'.repeat(870)]),
      ),
      attachments: Array.from({ length: MAX_ATTACHMENTS }, (_, i) => ({
        filename: `${'𝔄'.repeat(248)}${String(i).padStart(3, '0')}.pdf`,
        path: `https://files.example.com/${'p'.repeat(2000)}/${i}`,
        content_type: `application/${'x'.repeat(200)}`,
        content_id: `c${i}${'i'.repeat(120)}`,
      })),
    });
    const id = newEmailId();
    return {
      id,
      // Every attachment here names its content type.
      content: {
        ...toContent(input),
        attachments: storedAttachments(id, (input.attachments ?? []) as TypedAttachment[]),
      },
    };
  };

  it('carries an ordinary email whole, so the consumer reads nothing back', () => {
    const job = { id: newEmailId(), content: toContent(parseInput(sendEmailSchema, email(undefined))) };
    const message = toQueueMessage(job);
    expect(parseSendJob(message)).toEqual(job);
  });

  it('carries the template an email was rendered from (its webhooks name it)', () => {
    const template = { id: 'tpl_01m80mv90eew9ryfvqd1ksnhes', version_id: 'tplv_01m80mv90eew9ryfvqd1ksnhet' };
    const job = {
      id: newEmailId(),
      content: toContent({ ...parseInput(sendEmailSchema, email(undefined)), template }),
    };
    expect(parseSendJob(toQueueMessage(job))).toEqual(job);
    expect(job.content.template).toEqual(template);
  });

  it('carries the largest email the API accepts as a reference: the message stays under one 64 KB chunk', () => {
    const job = widest();
    expect(Buffer.byteLength(JSON.stringify(job))).toBeGreaterThan(600 * 1024); // what it would have been
    const message = toQueueMessage(job);
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(JOB_INLINE_MAX_BYTES);
    expect(parseSendJob(message)).toEqual({ id: job.id, content: null });
  });

  it('carries a job up to the limit whole, and one byte over it as a reference', () => {
    const base = { id: newEmailId(), content: toContent(parseInput(sendEmailSchema, email(undefined))) };
    const overhead = Buffer.byteLength(JSON.stringify({ ...base, content: { ...base.content, html: '' } }));
    const at = { ...base, content: { ...base.content, html: 'x'.repeat(JOB_INLINE_MAX_BYTES - overhead) } };
    expect(Buffer.byteLength(toQueueMessage(at))).toBe(JOB_INLINE_MAX_BYTES);
    expect(parseSendJob(toQueueMessage(at))?.content).toEqual(at.content);
    const over = {
      ...base,
      content: { ...base.content, html: 'x'.repeat(JOB_INLINE_MAX_BYTES - overhead + 1) },
    };
    expect(parseSendJob(toQueueMessage(over))).toEqual({ id: base.id, content: null });
  });

  it('still reads jobs queued before attachments existed, and refuses what is not a job', () => {
    const old = {
      id: 'em_x',
      content: {
        from: 'a@b.c',
        to: ['d@e.f'],
        cc: [],
        bcc: [],
        reply_to: [],
        subject: 's',
        html: null,
        text: 't',
      },
    };
    expect(parseSendJob(JSON.stringify(old))?.content).toEqual({ ...old.content, tags: [], headers: {} });
    expect(parseSendJob('{"id": "em_x"}')).toBeUndefined();
    expect(parseSendJob('{"id": "", "content": null}')).toBeUndefined();
  });
});

describe('fetching a path: guarded like webhook deliveries', () => {
  let server: Server;
  let base: string;
  const publicName = async () => [{ address: '93.184.216.34', family: 4 }];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '';
      if (url === '/file') res.writeHead(200).end(Buffer.alloc(1000, 1));
      else if (url === '/big') res.writeHead(200).end(Buffer.alloc(5000, 1));
      else if (url === '/declared') {
        res.writeHead(200, { 'content-length': '999999' });
        res.write('x');
      } else if (url === '/to-metadata')
        res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
      else if (url === '/to-private') res.writeHead(301, { location: 'https://10.1.2.3/x' }).end();
      else if (url === '/hop') res.writeHead(302, { location: '/file' }).end();
      else if (url === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else if (url === '/busy') res.writeHead(503).end();
      else if (url === '/throttled') res.writeHead(429).end();
      else if (url === '/slow') res.writeHead(200).write('x');
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const local = new GuardedHttp({ allowLoopback: true }, { fetchTimeoutMs: 500 });
  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      expect(error).toBeInstanceOf(FetchError);
      return { message: (error as FetchError).message, temporary: (error as FetchError).temporary };
    }
    throw new Error('expected the fetch to fail');
  };

  it('refuses a public name that resolves to 10.0.0.1 (checked on the resolved address), for good', async () => {
    const rebinding = new GuardedHttp(
      { allowLoopback: false },
      { resolve: async () => [{ address: '10.0.0.1', family: 4 }] },
    );
    expect(await failure(rebinding.fetch('https://files.example.com/a.pdf', 1000))).toEqual({
      message: expect.stringMatching(/files\.example\.com resolves to 10\.0\.0\.1 is a private address/),
      temporary: false,
    });
    const mapped = new GuardedHttp(
      { allowLoopback: false },
      { resolve: async () => [{ address: '::ffff:127.0.0.1', family: 6 }] },
    );
    expect((await failure(mapped.fetch('https://files.example.com/a.pdf', 1000))).temporary).toBe(false);
  });

  it('refuses http, credentials and private literals on AWS before connecting', async () => {
    const aws = new GuardedHttp({ allowLoopback: false }, { resolve: publicName });
    expect((await failure(aws.fetch('http://files.example.com/a', 10))).message).toMatch(/must use https/);
    expect((await failure(aws.fetch('https://u:p@files.example.com/a', 10))).message).toMatch(/credentials/);
    expect((await failure(aws.fetch('https://169.254.169.254/latest/meta-data', 10))).message).toMatch(
      /linkLocal/,
    );
    expect((await failure(aws.fetch(`${base}/file`, 10_000))).message).toMatch(/must use https/);
  });

  it('follows a redirect, checking where it leads: never to the metadata endpoint or a private address', async () => {
    expect((await local.fetch(`${base}/hop`, 10_000)).length).toBe(1000);
    expect(await failure(local.fetch(`${base}/to-metadata`, 10_000))).toEqual({
      message: expect.stringMatching(/169\.254\.169\.254.*linkLocal/),
      temporary: false,
    });
    expect((await failure(local.fetch(`${base}/to-private`, 10_000))).message).toMatch(
      /10\.1\.2\.3.*private/,
    );
    expect((await failure(local.fetch(`${base}/loop`, 10_000))).message).toMatch(/more than 3 redirects/);
  });

  it('caps the size while streaming, and refuses a declared size over the cap before reading', async () => {
    expect((await local.fetch(`${base}/file`, 1000)).length).toBe(1000);
    expect(await failure(local.fetch(`${base}/big`, 1000))).toEqual({
      message: 'the file is over the 1000 bytes left for it',
      temporary: false,
    });
    expect((await failure(local.fetch(`${base}/declared`, 1000))).message).toMatch(
      /999999 bytes, over the 1000/,
    );
  });

  it('tells a temporary failure (5xx, 429, timeout, no connection) from a final one (404)', async () => {
    expect(await failure(local.fetch(`${base}/busy`, 10))).toEqual({
      message: 'the server answered 503',
      temporary: true,
    });
    expect((await failure(local.fetch(`${base}/throttled`, 10))).temporary).toBe(true);
    expect(await failure(local.fetch(`${base}/missing`, 10))).toEqual({
      message: 'the server answered 404',
      temporary: false,
    });
    expect(await failure(local.fetch(`${base}/slow`, 10))).toEqual({
      message: 'no complete answer within 0.5 s',
      temporary: true,
    });
    const closed = `http://127.0.0.1:1/x`;
    expect((await failure(local.fetch(closed, 10))).temporary).toBe(true);
  });
});
