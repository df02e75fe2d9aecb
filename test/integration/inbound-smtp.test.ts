import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3ContentStore } from '../../functions/adapters/s3/content-store.js';
import { MAX_RECEIVED_MESSAGE_BYTES } from '../../functions/domains/receiving-regions.js';
import { RAW_PREFIX, rawKey } from '../../functions/receiving/model.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import {
  addressList,
  type InboundSmtp,
  type InboundSmtpOptions,
  type LocalReceiptEvent,
  startInboundSmtp,
} from '../../local/inbound-smtp.js';

/**
 * The local twin of SES's inbound SMTP endpoint on its own: recipients only where the receipt
 * rules take them, SES's 40 MB limit, the raw message written to the local S3 before the 250, and
 * SES's receipt event handed to the invoker.
 */
const BUCKET = 'content-test';
const ARN = 'arn:aws:lambda:us-east-1:000000000000:function:receive-email';
let emulators: Emulators;
let store: S3ContentStore;
const running: InboundSmtp[] = [];

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0, buckets: [BUCKET] });
  const s3 = new S3Client({
    endpoint: emulators.s3Endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    forcePathStyle: true,
  });
  store = new S3ContentStore(s3, BUCKET);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((smtp) => smtp.stop()));
});
afterAll(() => emulators?.stop());

/** A twin whose rules take any address at inbox.test; its invocations are recorded (or fail). */
async function twin(options: Partial<InboundSmtpOptions> = {}) {
  const events: LocalReceiptEvent[] = [];
  const smtp = await startInboundSmtp({
    port: 0,
    region: 'us-east-1',
    functionArn: ARN,
    acceptsRecipient: (address) => address.toLowerCase().endsWith('@inbox.test'),
    storeRaw: (key, bytes) => store.put(key, bytes, 'application/octet-stream'),
    invoke: async (event) => {
      events.push(event);
    },
    ...options,
  });
  running.push(smtp);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false });
  return { smtp, events, transport };
}

/** A plain SMTP conversation over a socket: each `say` resolves with the server's whole reply. */
async function converse(port: number) {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  let waiting: ((reply: string) => void) | undefined;
  const complete = () => {
    const match = /(?:^|\r\n)\d{3} [^\r\n]*\r\n/.exec(buffer);
    if (!match || !waiting) return;
    const end = match.index + match[0].length;
    const reply = buffer.slice(0, end);
    buffer = buffer.slice(end);
    const done = waiting;
    waiting = undefined;
    done(reply.trim());
  };
  socket.on('data', (chunk) => {
    buffer += chunk.toString();
    complete();
  });
  const next = () =>
    new Promise<string>((resolve) => {
      waiting = resolve;
      complete();
    });
  const greeting = await next();
  return {
    greeting,
    say: (line: string) => {
      const reply = next();
      socket.write(`${line}\r\n`);
      return reply;
    },
    write: (data: string) => socket.write(data),
    next,
    close: () => socket.destroy(),
  };
}

describe('the local inbound SMTP endpoint', () => {
  it('refuses a recipient the receipt rules do not take with 550 5.1.1, during the conversation', async () => {
    const { transport, events } = await twin();
    const refused = await transport
      .sendMail({ from: 'a@sender.test', to: 'someone@elsewhere.test', subject: 'x', text: 'x' })
      .catch((error: { responseCode?: number; response?: string }) => error);
    expect(refused).toMatchObject({ responseCode: 550 });
    expect((refused as { response: string }).response).toMatch(/^550 5\.1\.1 /);
    // With one recipient taken and one refused, the message goes to the one taken only.
    const sent = await transport.sendMail({
      from: 'a@sender.test',
      to: ['in@inbox.test', 'out@elsewhere.test'],
      subject: 'x',
      text: 'x',
    });
    expect(sent.accepted).toEqual(['in@inbox.test']);
    expect(sent.rejected).toEqual(['out@elsewhere.test']);
    expect(events.map((e) => e.Records[0]?.ses.receipt.recipients)).toEqual([['in@inbox.test']]);
  });

  it('advertises SES’s 40 MB and refuses a MAIL FROM that declares more, with 552', async () => {
    const { smtp } = await twin();
    const session = await converse(smtp.port);
    expect(session.greeting).toMatch(/^220 inbound-smtp\.us-east-1\.amazonaws\.com/);
    expect(await session.say('EHLO client.test')).toContain(`SIZE ${MAX_RECEIVED_MESSAGE_BYTES}`);
    expect(await session.say(`MAIL FROM:<a@sender.test> SIZE=${MAX_RECEIVED_MESSAGE_BYTES + 1}`)).toMatch(
      /^552 /,
    );
    expect(await session.say(`MAIL FROM:<a@sender.test> SIZE=${MAX_RECEIVED_MESSAGE_BYTES}`)).toMatch(
      /^250 /,
    );
    session.close();
  });

  it('refuses a DATA that goes past 40 MB with 552 and stores nothing of it', async () => {
    const { smtp, events } = await twin();
    const session = await converse(smtp.port);
    await session.say('EHLO client.test');
    expect(await session.say('MAIL FROM:<a@sender.test>')).toMatch(/^250 /);
    expect(await session.say('RCPT TO:<big@inbox.test>')).toMatch(/^250 /);
    expect(await session.say('DATA')).toMatch(/^354 /);
    const line = `${'x'.repeat(998)}\r\n`;
    const lines = Math.ceil((MAX_RECEIVED_MESSAGE_BYTES + 1_000_000) / line.length);
    const reply = session.next();
    session.write(`Subject: big\r\n\r\n${line.repeat(lines)}.\r\n`);
    expect(await reply).toMatch(/^552 /);
    session.close();
    await smtp.idle();
    expect(events).toEqual([]);
  });

  it('takes a 30 MB message, writes it whole to the local S3 before the 250, then hands SES’s receipt event over', async () => {
    const { transport, events, smtp } = await twin();
    const body = randomBytes(22 * 1024 * 1024)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    const message =
      'From: "Doe, Jane" <jane@sender.test>\r\nTo: big@inbox.test, "Inbox, Other" <other@inbox.test>\r\n' +
      'Cc: copy@inbox.test\r\nSubject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\nMessage-ID: <m1@sender.test>\r\n' +
      'Date: Mon, 05 Aug 2019 21:29:57 +0000\r\nMIME-Version: 1.0\r\n' +
      'Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
      `${body}\r\n`;
    expect(message.length).toBeGreaterThan(30 * 1024 * 1024);
    const sent = await transport.sendMail({
      envelope: { from: 'bounces@sender.test', to: ['big@inbox.test', 'other@inbox.test'] },
      raw: message,
    });
    const messageId = /Ok ([a-z0-9]{40})$/.exec(sent.response)?.[1] as string;
    expect(messageId).toBeDefined();
    // Stored before the 250: the object is there already, SES's trace headers on top of the message.
    const raw = Buffer.from((await store.get(rawKey(messageId))) ?? []);
    expect(rawKey(messageId)).toBe(`${RAW_PREFIX}${messageId}`);
    expect(raw.subarray(raw.length - message.length).toString()).toBe(message);
    expect(raw.subarray(0, raw.length - message.length).toString()).toMatch(
      new RegExp(
        `^Return-Path: <bounces@sender\\.test>\r\nReceived: from .+\r\n by inbound-smtp\\.us-east-1\\.amazonaws\\.com with SMTP id ${messageId}\r\n for big@inbox\\.test;\r\n .+ \\+0000 \\(UTC\\)\r\n$`,
      ),
    );
    await smtp.idle();
    expect(events).toHaveLength(1);
    const record = events[0]?.Records[0];
    expect(record).toMatchObject({ eventSource: 'aws:ses', eventVersion: '1.0' });
    const { mail, receipt } = record?.ses ?? {};
    expect(mail).toMatchObject({
      source: 'bounces@sender.test',
      messageId,
      destination: ['big@inbox.test', 'other@inbox.test'],
      headersTruncated: false,
      commonHeaders: {
        returnPath: 'bounces@sender.test',
        from: ['"Doe, Jane" <jane@sender.test>'],
        to: ['big@inbox.test', '"Inbox, Other" <other@inbox.test>'],
        cc: ['copy@inbox.test'],
        subject: 'Grüße',
        messageId: '<m1@sender.test>',
        date: 'Mon, 05 Aug 2019 21:29:57 +0000',
      },
    });
    expect(mail?.headers.slice(0, 3).map((h) => h.name)).toEqual(['Return-Path', 'Received', 'From']);
    expect(mail?.headers.find((h) => h.name === 'Received')?.value).toContain(
      `with SMTP id ${messageId} for`,
    );
    expect(receipt).toEqual({
      timestamp: mail?.timestamp,
      processingTimeMillis: expect.any(Number),
      recipients: ['big@inbox.test', 'other@inbox.test'],
      action: { type: 'Lambda', functionArn: ARN, invocationType: 'Event' },
    });
    // Verdicts the twin cannot compute offline are left out, not made up.
    for (const verdict of ['spamVerdict', 'virusVerdict', 'spfVerdict', 'dkimVerdict', 'dmarcVerdict'])
      expect(receipt).not.toHaveProperty(verdict);
  }, 60_000);

  it('answers 250 when the invocation fails (SES accepted the message) and keeps the raw message for the sweep', async () => {
    const { transport } = await twin({
      invoke: () => Promise.reject(new Error('receive-email failed')),
    });
    const sent = await transport.sendMail({
      from: 'a@sender.test',
      to: 'x@inbox.test',
      subject: 's',
      text: 't',
    });
    expect(sent.response).toMatch(/^250 /);
    const messageId = /Ok ([a-z0-9]{40})$/.exec(sent.response)?.[1] as string;
    expect(Buffer.from((await store.get(rawKey(messageId))) ?? []).toString()).toContain('Subject: s');
  });

  it('answers 451 (try again later) when the raw message cannot be stored, and invokes nothing', async () => {
    const { transport, events } = await twin({
      storeRaw: () => Promise.reject(new Error('S3 is down')),
    });
    const refused = await transport
      .sendMail({ from: 'a@sender.test', to: 'x@inbox.test', subject: 's', text: 't' })
      .catch((error: { responseCode?: number }) => error);
    expect(refused).toMatchObject({ responseCode: 451 });
    expect(events).toEqual([]);
  });
});

describe('the inbound SMTP port', () => {
  const occupy = () =>
    new Promise<Server>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
  const portOf = (server: Server) => (server.address() as { port: number }).port;

  it('0 picks a free port', async () => {
    const { smtp } = await twin({ port: 0 });
    expect(smtp.port).toBeGreaterThan(0);
    expect(smtp.portTaken).toBeUndefined();
  });

  it('a default port that is taken gives way to a free one, and says which was taken', async () => {
    const blocker = await occupy();
    try {
      const { smtp } = await twin({ port: portOf(blocker) });
      expect(smtp.portTaken).toBe(portOf(blocker));
      expect(smtp.port).not.toBe(portOf(blocker));
    } finally {
      blocker.close();
    }
  });

  it('a chosen port (INBOUND_SMTP_PORT) that is taken stops the start, naming the port', async () => {
    const blocker = await occupy();
    try {
      await expect(twin({ port: portOf(blocker), portRequired: true })).rejects.toMatchObject({
        code: 'EADDRINUSE',
        port: portOf(blocker),
      });
    } finally {
      blocker.close();
    }
  });
});

describe('addressList', () => {
  it('splits on commas outside quotes and angle brackets', () => {
    expect(addressList('"Doe, J" <j@x.test>, k@x.test , <l@x.test>')).toEqual([
      '"Doe, J" <j@x.test>',
      'k@x.test',
      '<l@x.test>',
    ]);
  });
});
