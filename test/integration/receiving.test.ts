import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoMetricsStore } from '../../functions/adapters/dynamodb/metrics-store.js';
import { DynamoReceivedEmailRepository } from '../../functions/adapters/dynamodb/received-emails.js';
import { S3ReceivedMailStore } from '../../functions/adapters/s3/received-mail.js';
import { SqsFailedReceipts } from '../../functions/adapters/sqs/received-failures.js';
import { makeHandler as makeReceiveHandler } from '../../functions/handlers/receive-email.js';
import { makeHandler as makeSweepHandler } from '../../functions/handlers/sweep-received.js';
import { HOUR_MS } from '../../functions/metrics/model.js';
import type { SesReceiptEvent } from '../../functions/receiving/events.js';
import { attachmentKey, rawKey } from '../../functions/receiving/model.js';
import type { ReceiveDeps } from '../../functions/receiving/receive.js';
import { RAW_GRACE_MS } from '../../functions/receiving/sweep.js';
import { uuidV7Of } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { type Delivery, newSigningSecret } from '../../functions/webhooks/model.js';
import { WebhookPublisher } from '../../functions/webhooks/publish.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { multipartMessage, PDF, PNG, sesReceiptEvent, tooDeepMessage } from '../support/received-mail.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * receive-email and sweep-received through their handlers, with SES's receipt event, against the
 * table (dynalite) and the content bucket and failure queue (fauxqs): what is stored, published and
 * counted, once per SES message id, and what the sweep finds that receive-email missed.
 */
const BUCKET = 'content-receiving';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let emulators: Emulators;
let table: TestTable;
let s3: S3Client;
let sqs: SQSClient;
let failureQueueUrl: string;
let received: DynamoReceivedEmailRepository;
let mail: S3ReceivedMailStore;
let metrics: DynamoMetricsStore;
const published: Delivery[] = [];
let sequence = 0;

const publisher = new WebhookPublisher({
  webhooks: {
    all: async () => [
      {
        id: 'wh_inbox',
        endpoint: 'https://inbox.example.com/',
        events: ['email.received'],
        status: 'enabled',
        created_at: '2026-11-20T00:00:00.000Z',
        signing_secret: newSigningSecret(),
      },
    ],
  },
  queue: { enqueue: async (d) => void published.push(...d) },
});

const deps = (): ReceiveDeps => ({
  received,
  mail,
  metrics,
  events: publisher,
  clock: systemClock,
  rawWait: { attempts: 2, pauseMs: 1 },
});

/** SES's example event for a new message, its recipient at our domain, received now. */
const newMessage = (to = 'inbox@receiving.example') => {
  const id = `test${Date.now()}x${++sequence}-000000`;
  const event = sesReceiptEvent((e) => {
    const ses = e.Records[0]?.ses as unknown as SesReceiptEvent['Records'][number]['ses'];
    ses.mail.messageId = id;
    ses.mail.timestamp = new Date().toISOString();
    ses.receipt.timestamp = ses.mail.timestamp;
    ses.receipt.recipients = [to];
  });
  return { id, event };
};
const putRaw = (id: string, bytes: Buffer) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: rawKey(id), Body: bytes }));
const events = () => published.splice(0).map((d) => ({ ...d, event: JSON.parse(d.body) }));

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0, buckets: [BUCKET] });
  table = await startTestTable();
  s3 = new S3Client({
    endpoint: emulators.s3Endpoint,
    region: 'us-east-1',
    credentials,
    forcePathStyle: true,
  });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  ({ QueueUrl: failureQueueUrl = '' } = await sqs.send(
    new CreateQueueCommand({ QueueName: 'received-failures' }),
  ));
  received = new DynamoReceivedEmailRepository(table.db, table.tableName, { retentionDays: 30 });
  mail = new S3ReceivedMailStore(s3, BUCKET);
  metrics = new DynamoMetricsStore(table.db, table.tableName);
});
afterAll(async () => {
  await emulators?.stop();
  await table?.stop();
});
beforeEach(() => void published.splice(0));

describe('receive-email', () => {
  it('stores a multipart message: the item, parsed.json, each attachment its own object; publishes email.received', async () => {
    const { id, event } = newMessage();
    await putRaw(id, multipartMessage());
    const { received: ids } = await makeReceiveHandler(deps())(event as never);
    expect(ids).toHaveLength(1);

    const email = await received.bySesMessageId(id);
    expect(email).toMatchObject({
      id: ids[0],
      ses_message_id: id,
      from: '"Doe, Jane" <jane@sender.example>',
      to: ['Inbox <inbox@receiving.example>'],
      received_for: ['inbox@receiving.example'],
      subject: 'Café order',
      message_id: '<order-2@sender.example>',
      in_reply_to: '<order-1@receiving.example>',
      references: ['<order-0@sender.example>', '<order-1@receiving.example>'],
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'gray' },
      spam: 'pass',
      virus: 'pass',
      notified: true,
    });
    expect(email?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const parsed = await mail.getParsed(email?.id ?? '');
    expect(parsed?.html).toContain('cid:logo@sender.example');
    expect(parsed?.text).toContain('Your order');
    const [logo, pdf] = email?.attachments ?? [];
    expect(Buffer.from((await mail.getAttachment(email?.id ?? '', logo?.id ?? '')) ?? []).equals(PNG)).toBe(
      true,
    );
    expect(Buffer.from((await mail.getAttachment(email?.id ?? '', pdf?.id ?? '')) ?? []).equals(PDF)).toBe(
      true,
    );

    const [one, ...more] = events();
    expect(more).toEqual([]);
    expect(one?.event).toMatchObject({
      type: 'email.received',
      data: {
        email_id: email?.id,
        received_for: ['inbox@receiving.example'],
        attachments: [
          {
            id: logo?.id,
            filename: 'logo.png',
            content_disposition: 'inline',
            content_id: 'logo@sender.example',
          },
          { id: pdf?.id, filename: 'order.pdf', content_disposition: 'attachment', content_id: null },
        ],
      },
    });
  });

  it('stores one email and publishes one webhook for a message SES hands over twice, even at once', async () => {
    const { id, event } = newMessage();
    await putRaw(id, multipartMessage());
    const handler = makeReceiveHandler(deps());
    const [first, second] = await Promise.all([handler(event as never), handler(event as never)]);
    await handler(event as never);
    expect(first.received).toEqual(second.received);
    const { data } = await received.list({ limit: 100, offset: 0 });
    expect(data.filter((e) => e.ses_message_id === id)).toHaveLength(1);
    // Published by each invocation that found it not yet notified, as the same message (one id).
    const ids = new Set(events().map((d) => d.message_id));
    expect(ids.size).toBe(1);
  });

  it('publishes when the email was stored but not notified (a crash between the two), and only then', async () => {
    const { id, event } = newMessage();
    await putRaw(id, multipartMessage());
    const failingMark: ReceiveDeps = {
      ...deps(),
      received: Object.assign(Object.create(received), {
        markNotified: async () => {
          throw new Error('the mark was lost');
        },
      }),
    };
    await expect(makeReceiveHandler(failingMark)(event as never)).rejects.toThrow('the mark was lost');
    expect(events()).toHaveLength(1);
    expect((await received.bySesMessageId(id))?.notified).toBe(false);

    await makeReceiveHandler(deps())(event as never);
    expect(events()).toHaveLength(1);
    expect((await received.bySesMessageId(id))?.notified).toBe(true);
    await makeReceiveHandler(deps())(event as never);
    expect(events()).toHaveLength(0);
  });

  it('keeps a message that does not parse, with what could be read and its raw message', async () => {
    const { id, event } = newMessage();
    await putRaw(id, tooDeepMessage());
    await makeReceiveHandler(deps())(event as never);
    const email = await received.bySesMessageId(id);
    expect(email).toMatchObject({ subject: 'Nested', from: 'Deep <deep@sender.example>', notified: true });
    expect(email?.parse_error).toMatch(/nesting depth/i);
    expect(await mail.readRaw(id)).toEqual(new Uint8Array(tooDeepMessage()));
    expect(events()).toHaveLength(1);
  });

  it('stores mail SES flagged as a virus, flagged', async () => {
    const { id, event } = newMessage();
    const ses = event.Records[0]?.ses;
    if (ses) ses.receipt.virusVerdict = { status: 'FAIL' };
    await putRaw(id, multipartMessage());
    await makeReceiveHandler(deps())(event as never);
    expect(await received.bySesMessageId(id)).toMatchObject({ virus: 'fail' });
  });

  it('fails (for Lambda to retry) when the raw message never appears', async () => {
    const { event } = newMessage();
    await expect(makeReceiveHandler(deps())(event as never)).rejects.toThrow('no raw message');
  });

  it("counts each received message once in the metrics' received count, under the domain it was received for", async () => {
    const domain = `counted${Date.now()}.example`;
    const { id, event } = newMessage(`inbox@${domain}`);
    await putRaw(id, multipartMessage());
    await makeReceiveHandler(deps())(event as never);
    await makeReceiveHandler(deps())(event as never);
    const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const counts = (await metrics.hours(hour - HOUR_MS, hour + HOUR_MS)).filter((h) => h.domain === domain);
    expect(counts.reduce((sum, h) => sum + (h.counts.received ?? 0), 0)).toBe(1);
  });
});

describe('sweep-received', () => {
  it("stores a failed invocation's message from the failure queue, and deletes the record", async () => {
    const { id, event } = newMessage();
    // The invocation failed for good (no raw yet, say): Lambda put its record on the failure queue.
    await expect(makeReceiveHandler(deps())(event as never)).rejects.toThrow();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: failureQueueUrl,
        MessageBody: JSON.stringify({
          version: '1.0',
          requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 3 },
          requestPayload: event,
          responseContext: { statusCode: 200, functionError: 'Unhandled' },
        }),
      }),
    );
    await putRaw(id, multipartMessage());
    const report = await makeSweepHandler({
      ...deps(),
      failures: new SqsFailedReceipts(sqs, failureQueueUrl),
    })();
    expect(report.fromFailures).toBe(1);
    expect(await received.bySesMessageId(id)).toMatchObject({
      received_for: ['inbox@receiving.example'],
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'gray' },
      notified: true,
    });
    expect(events()).toHaveLength(1);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: failureQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  it('stores a raw message older than 15 minutes that has no received email, from the headers SES added', async () => {
    const id = `swept${Date.now()}-000000`;
    const withSesHeaders = Buffer.concat([
      Buffer.from(
        [
          'Return-Path: <jane@sender.example>',
          `Received: from mail.sender.example by inbound-smtp.us-east-1.amazonaws.com with SMTP id ${id} for inbox@receiving.example; Sat, 28 Nov 2026 08:00:00 +0000 (UTC)`,
          'X-SES-Spam-Verdict: PASS',
          'X-SES-Virus-Verdict: PASS',
          'Authentication-Results: amazonses.com; spf=pass (spfCheck: ok) client-ip=203.0.113.0; dkim=fail header.i=@sender.example; dmarc=none header.from=sender.example;',
          '',
        ].join('\r\n'),
      ),
      multipartMessage(),
    ]);
    await putRaw(id, withSesHeaders);
    const fresh = newMessage();
    await putRaw(fresh.id, multipartMessage());
    const sweep = (atMs: number) =>
      makeSweepHandler({
        ...deps(),
        clock: { now: () => new Date(atMs) },
        failures: new SqsFailedReceipts(sqs, failureQueueUrl),
      })();

    // The first minute of an hour at least 15 minutes away: a run that looks at the raw messages.
    const hour = 3_600_000;
    const later = Math.ceil((Date.now() + RAW_GRACE_MS + 60_000) / hour) * hour + 60_000;
    // Within the grace, receive-email's own invocation is still expected: left alone.
    expect((await sweep(Math.floor(Date.now() / hour) * hour + 60_000)).fromRaw).toBe(0);
    // Outside the hourly look, the raw messages are not listed.
    expect((await sweep(later + 10 * 60_000)).fromRaw).toBe(0);
    expect(await received.bySesMessageId(id)).toBeNull();

    const report = await sweep(later);
    // Every raw message of the window without an email: this one, and the fresh one whose event never came.
    expect(report.fromRaw).toBeGreaterThanOrEqual(2);
    expect(await received.bySesMessageId(id)).toMatchObject({
      received_for: ['inbox@receiving.example'],
      authentication: { spf: 'pass', dkim: 'fail', dmarc: 'gray' },
      spam: 'pass',
      virus: 'pass',
      subject: 'Café order',
      notified: true,
    });
    // A second run finds them stored.
    expect((await sweep(later)).fromRaw).toBe(0);
  });
});

describe('the received mail store', () => {
  it('presigns downloads as attachments, named, until the time asked', async () => {
    const before = Date.now();
    const link = await mail.downloadLink(attachmentKey('e1', 'a1'), 'order.pdf', 3600);
    const url = new URL(link.download_url);
    expect(url.searchParams.get('response-content-disposition')).toBe(
      "attachment; filename*=UTF-8''order.pdf",
    );
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(Date.parse(link.expires_at)).toBeGreaterThanOrEqual(before + 3600_000);
  });
});

describe('the received emails repository', () => {
  it('lists newest first in cursor pages, and sets the expiry from the retention', async () => {
    const base = Date.now() + 10 * 86_400_000;
    const stored = [];
    for (let i = 0; i < 3; i++) {
      const { event } = newMessage();
      const receipt = event.Records[0]?.ses;
      const at = new Date(base + i * 1000).toISOString();
      const id = uuidV7Of(base + i * 1000, new Uint8Array(16).fill(i));
      const email = {
        id,
        ses_message_id: receipt?.mail.messageId ?? '',
        created_at: at,
        from: 'a@sender.example',
        to: [],
        cc: [],
        bcc: [],
        reply_to: [],
        received_for: [],
        subject: `n${i}`,
        message_id: '<m@x>',
        in_reply_to: null,
        references: [],
        attachments: [],
        authentication: { spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' },
        spam: 'unknown',
        virus: 'unknown',
        size: 1,
        notified: true,
      } as const;
      await received.store({
        ...email,
        to: [],
        cc: [],
        bcc: [],
        reply_to: [],
        received_for: [],
        references: [],
        attachments: [],
      });
      stored.push(id);
    }
    const first = await received.list({ limit: 2, offset: 0 });
    expect(first.data.map((e) => e.id)).toEqual([stored[2], stored[1]]);
    expect(first.has_more).toBe(true);
    const next = await received.list({ limit: 2, offset: 0, after: stored[1] });
    expect(next.data.map((e) => e.id)[0]).toBe(stored[0]);
    const newer = await received.list({ limit: 2, offset: 0, before: stored[0] });
    expect(newer.data.map((e) => e.id)).toEqual([stored[2], stored[1]]);

    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: 'RECEIVED', sk: stored[0] } }),
    );
    expect(Item?.expires_at).toBe(Math.floor(base / 1000) + 30 * 86_400);
  });
});
