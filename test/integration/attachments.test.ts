import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { PART_BYTES, S3ContentStore } from '../../functions/adapters/s3/content-store.js';
import {
  attachmentKey,
  bodyKey,
  MAX_MESSAGE_BYTES,
  type StoredAttachment,
} from '../../functions/emails/attachments.js';
import { deliverEmail } from '../../functions/emails/deliver.js';
import type { EmailContent } from '../../functions/emails/email.js';
import { MailerError } from '../../functions/emails/ports.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { FetchError, type FileFetcher, systemClock } from '../../functions/shared/ports.js';
import type { Suppression } from '../../functions/suppressions/ports.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { emailContent, ScriptedMailer } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * The content store against the S3 emulator (fauxqs), and the consumer's preparation of an email
 * with attachments: read back from the store, fetched from a path, refused when it cannot be sent.
 */
const BUCKET = 'content-test';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let emulators: Emulators;
let s3Dir: string;
let store: S3ContentStore;
let table: TestTable;
let emails: DynamoEmailRepository;

const s3 = (endpoint: string) =>
  new S3Client({ endpoint, region: 'us-east-1', credentials, forcePathStyle: true });

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 's3-'));
  emulators = await startEmulators({ sesPort: 0, buckets: [BUCKET], s3Dir });
  store = new S3ContentStore(s3(emulators.s3Endpoint), BUCKET);
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
});
afterAll(async () => {
  await emulators?.stop();
  await table?.stop();
  rmSync(s3Dir, { recursive: true, force: true });
});

describe('S3ContentStore against the S3 emulator', () => {
  it('puts, gets and sizes objects; a missing key is null, not an error', async () => {
    const bytes = randomBytes(1234);
    await store.put('attachments/em_x/a', bytes, 'application/pdf');
    expect(Buffer.from((await store.get('attachments/em_x/a')) ?? []).equals(bytes)).toBe(true);
    expect(await store.size('attachments/em_x/a')).toBe(1234);
    expect(await store.get('attachments/em_x/missing')).toBeNull();
    expect(await store.size('attachments/em_x/missing')).toBeNull();
  });

  it('puts a file larger than one part in parts, and reads it back whole', async () => {
    const big = randomBytes(PART_BYTES + 1024 * 1024);
    await store.put('attachments/em_x/big', big, 'application/octet-stream');
    expect(Buffer.from((await store.get('attachments/em_x/big')) ?? []).equals(big)).toBe(true);
  }, 30_000);

  it('presigns a GET link that downloads the object, valid for the time asked', async () => {
    const bytes = randomBytes(100);
    await store.put('attachments/em_x/link', bytes, 'image/png');
    const before = Date.now();
    const { url, expiresAt } = await store.downloadUrl(
      'attachments/em_x/link',
      { filename: 'logo ü.png', contentType: 'image/png' },
      600,
    );
    // Credentials without an expiry (as the emulator's, and Lambda's environment's): the time asked.
    expect(expiresAt.getTime() - before).toBeGreaterThanOrEqual(600_000);
    expect(expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(600_000);
    const parsed = new URL(url);
    expect(parsed.searchParams.get('X-Amz-Expires')).toBe('600');
    expect(parsed.searchParams.get('response-content-disposition')).toBe(
      "attachment; filename*=UTF-8''logo%20%C3%BC.png",
    );
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('keeps objects on disk locally: a restarted emulator has them', async () => {
    const bytes = randomBytes(500);
    await store.put('bodies/em_kept.json', bytes, 'application/json');
    await emulators.stop();
    emulators = await startEmulators({ sesPort: 0, buckets: [BUCKET], s3Dir });
    store = new S3ContentStore(s3(emulators.s3Endpoint), BUCKET);
    expect(Buffer.from((await store.get('bodies/em_kept.json')) ?? []).equals(bytes)).toBe(true);
  });
});

describe('the consumer with attachments', () => {
  const file = (id: string, over: Partial<StoredAttachment> = {}): StoredAttachment => ({
    id,
    filename: 'report.pdf',
    content_type: 'application/pdf',
    content_disposition: 'attachment',
    content_id: null,
    size: null,
    ...over,
  });
  async function stored(content: EmailContent) {
    const id = newEmailId();
    await emails.create({ id, created_at: new Date().toISOString(), content });
    return id;
  }
  const fetcher = (answer: () => Promise<Uint8Array>) => {
    const calls: string[] = [];
    const fetch: FileFetcher['fetch'] = async (url) => {
      calls.push(url);
      return answer();
    };
    return { calls, fetch };
  };

  it('reads a job that came as a reference back: content, large bodies and files from the store', async () => {
    const html = `<p>${'x'.repeat(300_000)}</p>`;
    const logo = randomBytes(2000);
    const id = newEmailId();
    const attachments = [
      file('a1', {
        filename: 'logo.png',
        content_type: 'image/png',
        content_disposition: 'inline',
        content_id: 'logo',
        size: 2000,
      }),
    ];
    await store.put(attachmentKey(id, 'a1'), logo, 'image/png');
    await store.put(bodyKey(id), Buffer.from(JSON.stringify({ html, text: 'plain' })), 'application/json');
    await emails.create({
      id,
      created_at: new Date().toISOString(),
      content: emailContent({ html: null, text: null, body_key: bodyKey(id), attachments }),
    });
    const mailer = new ScriptedMailer();
    const outcome = await deliverEmail(
      { emails, mailer, clock: systemClock, content: store },
      { id, content: null },
      false,
    );
    expect(outcome).toMatchObject({ result: 'sent' });
    const [sent] = mailer.sent;
    expect(sent?.content).toMatchObject({ html, text: 'plain' });
    expect(sent?.content).not.toHaveProperty('body_key');
    expect(
      sent?.files?.map((f) => [f.filename, f.disposition, f.content_id, Buffer.from(f.bytes).equals(logo)]),
    ).toEqual([['logo.png', 'inline', 'logo', true]]);
  });

  it('fetches a path once, keeps it, and sends it; a retry reads the kept copy', async () => {
    const report = randomBytes(4096);
    const id = await stored(
      emailContent({ attachments: [file('p1', { path: 'https://files.example.com/r.pdf' })] }),
    );
    const files = fetcher(async () => report);
    const mailer = new ScriptedMailer([new MailerError('slow down', 'refused', 'Throttling')]);
    const deps = { emails, mailer, clock: systemClock, content: store, fetcher: files };
    const job = (await emails.getContent(id)) as EmailContent;
    expect((await deliverEmail(deps, { id, content: job }, false)).result).toBe('retry');
    expect((await deliverEmail(deps, { id, content: job }, false)).result).toBe('sent');
    expect(files.calls).toEqual(['https://files.example.com/r.pdf']);
    expect(Buffer.from((await store.get(attachmentKey(id, 'p1'))) ?? []).equals(report)).toBe(true);
    expect(Buffer.from(mailer.sent[0]?.files?.[0]?.bytes ?? []).equals(report)).toBe(true);
  });

  it('retries a path that fails for now, and ends the email failed naming the file on the last attempt; SES is never called', async () => {
    const id = await stored(
      emailContent({ attachments: [file('p1', { path: 'https://files.example.com/r.pdf' })] }),
    );
    const mailer = new ScriptedMailer();
    const deps = {
      emails,
      mailer,
      clock: systemClock,
      content: store,
      fetcher: fetcher(async () => {
        throw new FetchError('the server answered 503', true);
      }),
    };
    const content = (await emails.getContent(id)) as EmailContent;
    expect(await deliverEmail(deps, { id, content }, false)).toEqual({
      result: 'retry',
      reason: 'attachment 0 (report.pdf) could not be fetched from its path: the server answered 503',
    });
    expect((await emails.getState(id))?.status).toBe('queued');
    expect(await deliverEmail(deps, { id, content }, true)).toMatchObject({ result: 'failed', gaveUp: true });
    expect(await emails.get(id)).toMatchObject({
      status: 'failed',
      failure_reason:
        'gave up: attachment 0 (report.pdf) could not be fetched from its path: the server answered 503',
    });
    expect(mailer.sent).toHaveLength(0);
  });

  it('ends an email over SES’s 40 MB failed at once, saying so', async () => {
    const id = await stored(
      emailContent({ attachments: [file('p1', { path: 'https://files.example.com/huge' })] }),
    );
    let budget = 0;
    const deps = {
      emails,
      mailer: new ScriptedMailer(),
      clock: systemClock,
      content: store,
      fetcher: {
        fetch: async (_url: string, maxBytes: number) => {
          budget = maxBytes;
          throw new FetchError(`the file is over the ${maxBytes} bytes left for it`, false);
        },
      },
    };
    const outcome = await deliverEmail(
      deps,
      { id, content: (await emails.getContent(id)) as EmailContent },
      false,
    );
    expect(outcome).toMatchObject({ result: 'failed', gaveUp: false });
    // The cap is what the rest of the message leaves of 40 MB, in raw bytes (base64 takes 4 for 3).
    expect(budget).toBeGreaterThan(0.74 * MAX_MESSAGE_BYTES);
    expect(budget).toBeLessThan(0.75 * MAX_MESSAGE_BYTES);
    expect((await emails.get(id))?.failure_reason).toMatch(/attachment 0 \(report\.pdf\).*over the/);
  });

  it('fetches nothing for an email whose every recipient is suppressed', async () => {
    const id = await stored(
      emailContent({ attachments: [file('p1', { path: 'https://files.example.com/r.pdf' })] }),
    );
    const files = fetcher(async () => new Uint8Array(1));
    const everyone = {
      find: async (addresses: string[]) =>
        new Map(addresses.map((email) => [email, { email, origin: 'bounce' } as Suppression])),
    };
    const deps = {
      emails,
      mailer: new ScriptedMailer(),
      clock: systemClock,
      content: store,
      fetcher: files,
      suppressions: everyone,
    };
    const outcome = await deliverEmail(
      deps,
      { id, content: (await emails.getContent(id)) as EmailContent },
      false,
    );
    expect(outcome).toMatchObject({ result: 'suppressed' });
    expect(files.calls).toEqual([]);
  });

  it('prepares and sends emails with attachments one at a time: one email’s files in memory at once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await stored(emailContent({ attachments: [file('f1', { size: 10 })] }));
      await store.put(attachmentKey(id, 'f1'), randomBytes(10), 'application/pdf');
      ids.push(id);
    }
    const steps: string[] = [];
    const tracing = {
      put: store.put.bind(store),
      size: store.size.bind(store),
      downloadUrl: store.downloadUrl.bind(store),
      get: async (key: string) => {
        steps.push(`load ${key.split('/')[1]}`);
        return store.get(key);
      },
    };
    const mailer = {
      send: async (job: { id: string }) => {
        steps.push(`send ${job.id}`);
        // SES taking its time: another email's files must not be loaded meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 30));
        steps.push(`sent ${job.id}`);
        return { messageId: `m-${job.id}` };
      },
    };
    const deps = { emails, mailer, clock: systemClock, content: tracing };
    const outcomes = await Promise.all(
      ids.map(async (id) =>
        deliverEmail(deps, { id, content: (await emails.getContent(id)) as EmailContent }, false),
      ),
    );
    expect(outcomes.map((o) => o.result)).toEqual(['sent', 'sent', 'sent']);
    // Each email's load, send and sent come together, never interleaved with another's.
    for (let i = 0; i < steps.length; i += 3) {
      const id = steps[i]?.split(' ')[1];
      expect(steps.slice(i, i + 3)).toEqual([`load ${id}`, `send ${id}`, `sent ${id}`]);
    }
  });
});
