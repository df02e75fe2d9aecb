import { randomBytes } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRawSweepCursor, RAW_SWEEP_KEY } from '../../functions/adapters/dynamodb/raw-sweep-cursor.js';
import { DynamoReceivedEmailRepository } from '../../functions/adapters/dynamodb/received-emails.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { S3ContentStore } from '../../functions/adapters/s3/content-store.js';
import { S3ReceivedMailStore } from '../../functions/adapters/s3/received-mail.js';
import { receivedEmailSchema } from '../../functions/receiving/answers.js';
import { RECEIVED_LIMITS } from '../../functions/receiving/bounds.js';
import type { Receipt } from '../../functions/receiving/events.js';
import { rawKey } from '../../functions/receiving/model.js';
import { getReceivedEmail } from '../../functions/receiving/reads.js';
import { type ReceiveDeps, receive } from '../../functions/receiving/receive.js';
import { RAW_GRACE_MS, sweepReceived } from '../../functions/receiving/sweep.js';
import { systemClock } from '../../functions/shared/ports.js';
import { type Delivery, newSigningSecret } from '../../functions/webhooks/model.js';
import { WebhookPublisher } from '../../functions/webhooks/publish.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * receive() against the table (dynalite) and the content bucket (local S3) with what a sender may
 * choose: a hostile message whose every list and header is huge (bounded: bounds.ts), a message
 * SES hands over once per matching receipt rule, and a 30 MB one; and the sweep's listing of more
 * raw messages than one run has time for.
 */
const BUCKET = 'content-receiving-limits';
const SWEPT_BUCKET = 'content-receiving-swept';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let emulators: Emulators;
let table: TestTable;
let s3: S3Client;
let received: DynamoReceivedEmailRepository;
let mail: S3ReceivedMailStore;
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
  events: publisher,
  clock: systemClock,
  rawWait: { attempts: 2, pauseMs: 1 },
});

const receipt = (sesMessageId: string, recipients = ['inbox@receiving.example']): Receipt => ({
  sesMessageId,
  receivedAt: new Date().toISOString(),
  recipients,
  authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
  spam: 'pass',
  virus: 'pass',
});

const newId = () => `limits${Date.now()}x${++sequence}-000000`;
const putRaw = (id: string, bytes: Buffer) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: rawKey(id), Body: bytes }));
const fold = (value: string) => value.replace(/.{70}/g, '$&\r\n ');

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0, buckets: [BUCKET, SWEPT_BUCKET] });
  table = await startTestTable();
  s3 = new S3Client({
    endpoint: emulators.s3Endpoint,
    region: 'us-east-1',
    credentials,
    forcePathStyle: true,
  });
  received = new DynamoReceivedEmailRepository(table.db, table.tableName, { retentionDays: 30 });
  mail = new S3ReceivedMailStore(s3, BUCKET);
});
afterAll(async () => {
  await emulators?.stop();
  await table?.stop();
});

/**
 * A message made to overflow what it is stored in: a 500 KB subject of characters JSON escapes
 * (quotes, backslashes, control characters), 3,000 addresses in To and in Cc, 300 references and
 * 1,500 tiny attachments with long names.
 */
function hostileMessage(): { raw: Buffer; subject: string } {
  const subject = 'a"b\\c\u0001'.repeat(100_000);
  const addresses = Array.from({ length: 3000 }, (_, i) => `user${i}@receiving.example`).join(',\r\n ');
  const references = Array.from({ length: 300 }, (_, i) => `<ref-${i}@sender.example>`).join('\r\n ');
  const parts = Array.from({ length: 1500 }, (_, i) =>
    [
      '--b',
      'Content-Type: text/plain',
      `Content-Disposition: attachment; filename="${'f'.repeat(200)}-${i}.txt"`,
      '',
      `part ${i}`,
    ].join('\r\n'),
  );
  const raw = Buffer.from(
    [
      'From: sender@sender.example',
      `To: ${addresses}`,
      `Cc: ${addresses}`,
      `Subject: ${fold(subject)}`,
      'Message-ID: <hostile@sender.example>',
      `References: ${references}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'The body.',
      ...parts,
      '--b--',
      '',
    ].join('\r\n'),
    'latin1',
  );
  return { raw, subject };
}

describe('receive() with what a sender chooses', () => {
  it('stores a hostile message, its item and its email.received bounded and marked truncated', async () => {
    const id = newId();
    const { raw } = hostileMessage();
    await putRaw(id, raw);
    published.splice(0);
    const { email, created } = await receive(deps(), receipt(id));
    expect(created).toBe(true);

    const stored = await received.get(email.id);
    expect(stored).toMatchObject({ truncated: true, notified: true });
    expect(stored?.subject.length).toBe(RECEIVED_LIMITS.subject);
    expect(stored?.subject).not.toContain(String.fromCharCode(1));
    expect(stored?.to.length).toBeLessThanOrEqual(RECEIVED_LIMITS.addressesPerList);
    expect(stored?.to[0]).toBe('user0@receiving.example');
    expect(stored?.references).toHaveLength(RECEIVED_LIMITS.references);
    const listed = stored?.attachments ?? [];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThanOrEqual(RECEIVED_LIMITS.attachments);
    expect(listed[0]?.filename).toBe(`${'f'.repeat(200)}-0.txt`);
    expect(Buffer.from((await mail.getAttachment(email.id, listed[0]?.id ?? '')) ?? []).toString()).toBe(
      'part 0\n',
    );

    // The item, as DynamoDB holds it, well under its 400 KB; the event's message under SQS's 256 KB.
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.received, sk: email.id } }),
    );
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(200 * 1024);
    expect(published).toHaveLength(1);
    expect(Buffer.byteLength(JSON.stringify(published[0]))).toBeLessThan(200 * 1024);

    // The full headers stay in parsed.json.
    const parsed = await mail.getParsed(email.id);
    expect(parsed?.headers.subject?.length).toBeGreaterThan(400_000);
    expect(parsed?.headers.to).toContain('user2999@receiving.example');

    // GET shows it truncated, in Resend's schema and ours.
    const answer = await getReceivedEmail({ received, mail }, email.id, 'cid');
    expect(answer.truncated).toBe(true);
    const ours = receivedEmailSchema.safeParse(answer);
    expect(ours.success, JSON.stringify(ours.error?.issues)).toBe(true);
    expectResendShape(JSON.parse(JSON.stringify(answer)), 'GetReceivedEmailResponse');
  }, 60_000);

  it('merges the recipients of each receipt rule SES runs for one message into received_for, once', async () => {
    const id = newId();
    await putRaw(
      id,
      Buffer.from('From: a@sender.example\r\nTo: x@one.example\r\nSubject: hi\r\n\r\nHello.\r\n'),
    );
    await receive(deps(), receipt(id, ['x@one.example']));
    // The second rule's invocation (a domain of another of our rules), then SES's retry of it.
    const second = await receive(deps(), receipt(id, ['y@two.example', 'x@one.example']));
    expect(second.created).toBe(false);
    await receive(deps(), receipt(id, ['y@two.example']));
    const stored = await received.bySesMessageId(id);
    expect(stored?.received_for).toEqual(['x@one.example', 'y@two.example']);
    expect(stored?.truncated).toBeUndefined();
  });

  it('stores a 30 MB message, its large attachment byte for byte', async () => {
    const id = newId();
    const bytes = randomBytes(22 * 1024 * 1024);
    const raw = Buffer.concat([
      Buffer.from(
        [
          'From: a@sender.example',
          'To: inbox@receiving.example',
          'Subject: a large file',
          'MIME-Version: 1.0',
          'Content-Type: multipart/mixed; boundary="b"',
          '',
          '--b',
          'Content-Type: text/plain',
          '',
          'Attached.',
          '--b',
          'Content-Type: application/octet-stream',
          'Content-Transfer-Encoding: base64',
          'Content-Disposition: attachment; filename="large.bin"',
          '',
          '',
        ].join('\r\n'),
      ),
      Buffer.from(bytes.toString('base64').replace(/.{76}/g, '$&\r\n')),
      Buffer.from('\r\n--b--\r\n'),
    ]);
    expect(raw.length).toBeGreaterThan(29 * 1024 * 1024);
    // In parts, as SES writes it whole but the local S3 takes at most 11 MiB a request.
    await new S3ContentStore(s3, BUCKET).put(rawKey(id), raw, 'message/rfc822');
    const { email } = await receive(deps(), receipt(id));
    expect(email.size).toBe(raw.length);
    const [large] = email.attachments;
    expect(large).toMatchObject({ filename: 'large.bin', size: bytes.length });
    const read = await mail.getAttachment(email.id, large?.id ?? '');
    expect(read && Buffer.from(read).equals(bytes)).toBe(true);
  }, 60_000);

  it('sweeps every raw message however few a run has time for: each run goes on where the last stopped', async () => {
    const swept = new S3ReceivedMailStore(s3, SWEPT_BUCKET);
    const ids = Array.from({ length: 5 }, () => newId());
    for (const id of ids)
      await s3.send(
        new PutObjectCommand({
          Bucket: SWEPT_BUCKET,
          Key: rawKey(id),
          Body: `From: a@sender.example\r\nTo: inbox@receiving.example\r\nSubject: ${id}\r\n\r\nHi.\r\n`,
        }),
      );
    // The first minute of an hour past their grace: a run that looks at the raw messages.
    const hour = 3_600_000;
    const later = Math.ceil((Date.now() + RAW_GRACE_MS + 60_000) / hour) * hour + 60_000;
    const rawCursor = new DynamoRawSweepCursor(table.db, table.tableName);
    // Time for two messages a run: the failure queue's look, the hourly gate, a page, two keys.
    const run = (runAt: number) => {
      let checks = 0;
      return sweepReceived({
        ...deps(),
        mail: swept,
        clock: { now: () => new Date(runAt) },
        failures: { receive: async () => [], remove: async () => undefined },
        rawCursor,
        timeLeftMs: () => (++checks <= 5 ? 60_000 : 0),
      });
    };
    const stored = async () =>
      (await Promise.all(ids.map((id) => received.bySesMessageId(id)))).filter(Boolean).length;
    expect((await run(later)).fromRaw).toBe(2);
    expect(await stored()).toBe(2);
    expect((await run(later + hour)).fromRaw).toBe(2);
    expect((await run(later + 2 * hour)).fromRaw).toBe(1);
    expect(await stored()).toBe(5);
    // The pass ended at the last key: the next starts again from the first.
    const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: RAW_SWEEP_KEY }));
    expect(Item?.start_after).toBeUndefined();
    expect(Item?.pass_started_ms).toBe(later + 2 * hour);
  });
});
