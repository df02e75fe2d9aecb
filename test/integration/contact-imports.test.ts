import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import {
  propertyItem,
  propertyKeyItem,
  segmentItem,
  topicItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoContactImportStore } from '../../functions/adapters/dynamodb/contact-import-store.js';
import { S3ImportFiles } from '../../functions/adapters/s3/import-files.js';
import { MAX_IMPORT_REQUEST_BYTES } from '../../functions/contact-imports/limits.js';
import type { Checkpoint, ChunkWrite } from '../../functions/contact-imports/ports.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-contact-import.js';
import { makeHandler as makeUpload } from '../../functions/handlers/create-contact-import-upload.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-contact-import.js';
import { makeHandler as makeWorker } from '../../functions/handlers/import-contacts.js';
import { makeHandler as makeList } from '../../functions/handlers/list-contact-imports.js';
import { newUuid } from '../../functions/shared/ids.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { context, httpEvent, parseBody, sqsEvent } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { MemoryImportQueue } from '../support/memory-imports.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * Contact imports through their real paths: the handlers with API Gateway's v2 events (the form
 * exactly as the official SDK's contacts.imports.create builds it), the worker on SQS events
 * against dynalite (with TransactWriteItems) and the local S3, a crash injected part-way.
 */

type Response = APIGatewayProxyStructuredResultV2;
const BUCKET = 'content-test';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const SEGMENT = newUuid();
const TOPIC = newUuid();
const PLAN = newUuid();
const silentLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

let emulators: Emulators;
let s3Dir: string;
let table: TestTable;
let token: string;
let store: DynamoContactImportStore;
let files: S3ImportFiles;
let queue: MemoryImportQueue;
let apiDeps: Parameters<typeof makeCreate>[0];
const clock = { now: () => new Date() };

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 's3-'));
  emulators = await startEmulators({ sesPort: 0, buckets: [BUCKET], s3Dir });
  table = await startTestTable();
  const apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  store = new DynamoContactImportStore(table.db, table.tableName);
  files = new S3ImportFiles(
    new S3Client({ endpoint: emulators.s3Endpoint, region: 'us-east-1', credentials, forcePathStyle: true }),
    BUCKET,
  );
  queue = new MemoryImportQueue();
  const at = new Date().toISOString();
  for (const Item of [
    segmentItem({ id: SEGMENT, name: 'Customers', created_at: at }),
    topicItem({
      id: TOPIC,
      name: 'News',
      description: null,
      default_subscription: 'opt_out',
      visibility: 'public',
      created_at: at,
      updated_at: at,
    }),
    propertyItem({ id: PLAN, key: 'plan', type: 'string', fallback_value: null, created_at: at }),
    propertyKeyItem({ id: PLAN, key: 'plan' }),
  ])
    await table.db.send(new PutCommand({ TableName: table.tableName, Item }));
  apiDeps = {
    apiKeys,
    clock,
    log: silentLog,
    imports: store,
    files,
    queue,
    audience: new DynamoAudienceReads(table.db, table.tableName),
    newId: newUuid,
  };
});
afterAll(async () => {
  await emulators?.stop();
  await table?.stop();
  rmSync(s3Dir, { recursive: true, force: true });
});

/** The request the official SDK sends for contacts.imports.create, captured from its fetch. */
async function sdkRequest(options: Parameters<Resend['contacts']['imports']['create']>[0]): Promise<Request> {
  let captured: Request | undefined;
  const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    captured = new Request(input as string | URL | Request, init);
    return new Response(JSON.stringify({ object: 'contact_import', id: 'x' }), {
      status: 201,
      headers: { 'content-type': 'application/json' },
    });
  });
  try {
    await new Resend('re_test_key').contacts.imports.create(options);
  } finally {
    spy.mockRestore();
  }
  if (!captured) throw new Error('the SDK sent nothing');
  return captured;
}

/** API Gateway's v2 event for that request: a form is binary to it, so its body comes base64-encoded. */
async function formEvent(request: Request) {
  const event = httpEvent({
    method: 'POST',
    path: '/v1/contacts/imports',
    routeKey: 'POST /v1/contacts/imports',
    token,
    body: Buffer.from(await request.arrayBuffer()).toString('base64'),
    headers: { 'content-type': request.headers.get('content-type') ?? '' },
  });
  event.isBase64Encoded = true;
  return event;
}

const create = async (event: ReturnType<typeof httpEvent>) =>
  (await makeCreate(apiDeps)(event, context())) as Response;

const get = async (id: string) =>
  (await makeGet(apiDeps)(
    httpEvent({
      method: 'GET',
      path: `/v1/contacts/imports/${id}`,
      routeKey: 'GET /v1/contacts/imports/{id}',
      token,
      pathParameters: { id },
    }),
    context(),
  )) as Response;

/** The worker, fed the queued steps as SQS would deliver them, until none is left. */
async function drain(worker = makeWorker({ store, files, queue, clock, newId: newUuid })) {
  for (let i = 0; i < 1_000 && queue.steps.length; i++) {
    const step = queue.steps.shift() as { import_id: string };
    const answer = await worker(sqsEvent([{ body: JSON.stringify(step), messageId: `m${i}` }]));
    // A failed step is delivered again (SQS, after its visibility timeout).
    if (answer.batchItemFailures.length) queue.steps.unshift(step);
  }
}

describe('the import files on the local S3', () => {
  it('read from a byte offset (a ranged GET), and from the very end as nothing (S3 answers 416 past it)', async () => {
    await files.put('imports/range.csv', Buffer.from('email\na@example.com\n'));
    const read = async (offset: number) => {
      const chunks: Buffer[] = [];
      for await (const chunk of (await files.openFrom('imports/range.csv', offset)) ?? [])
        chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    };
    expect(await read(6)).toBe('a@example.com\n');
    expect(await read(20)).toBe('');
    expect(await files.openFrom('imports/none.csv', 0)).toBeUndefined();
  });
});

describe("POST /v1/contacts/imports with the SDK's form, then the worker", () => {
  it('imports the file: contacts, memberships, topic choices and properties, counted as Resend counts', async () => {
    const csv =
      'Email,First Name,Plan\nada@example.com,Ada,pro\nnot-an-address,Bob,free\nADA@example.com,Again,team\n';
    const request = await sdkRequest({
      file: new Blob([csv], { type: 'text/csv' }),
      columnMap: {
        email: 'Email',
        firstName: 'First Name',
        properties: { plan: { column: 'Plan', type: 'string' } },
      },
      onConflict: 'upsert',
      segments: [{ id: SEGMENT }],
      topics: [{ id: TOPIC, subscription: 'opt_in' }],
    });
    expect(request.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/);
    const created = await create(await formEvent(request));
    expect(created.statusCode).toBe(201);
    const { id } = parseBody(created);
    expectResendShape(parseBody(created), 'CreateContactImportResponseSuccess');
    expect(parseBody(await get(id)).status).toBe('queued');

    await drain();
    const answer = parseBody(await get(id));
    expectResendShape(answer, 'ContactImport');
    expect(answer).toMatchObject({
      status: 'completed',
      counts: { total: 3, created: 1, updated: 1, skipped: 0, failed: 1 },
      failures: [{ row: 2, reason: 'email: "not-an-address" is not an email address' }],
    });
    const audience = new DynamoAudienceReads(table.db, table.tableName);
    const ada = await audience.contactByAddress('Ada@Example.com', true);
    expect(ada).toMatchObject({ email: 'ada@example.com', first_name: 'Again', props: { [PLAN]: 'team' } });
    expect((await audience.membershipsOf(ada?.id ?? '')).map((m) => m.segment_id)).toEqual([SEGMENT]);
    expect((await audience.choicesOf(ada?.id ?? '')).map((c) => [c.topic_id, c.subscription])).toEqual([
      [TOPIC, 'opt_in'],
    ]);

    const list = (await makeList(apiDeps)(
      httpEvent({ method: 'GET', path: '/v1/contacts/imports', token, query: { status: 'completed' } }),
      context(),
    )) as Response;
    expectResendShape(parseBody(list), 'ListContactImportsResponseSuccess');
    expect(parseBody(list).data.map((i: { id: string }) => i.id)).toContain(id);
    const queued = (await makeList(apiDeps)(
      httpEvent({ method: 'GET', path: '/v1/contacts/imports', token, query: { status: 'queued' } }),
      context(),
    )) as Response;
    expect(parseBody(queued).data.map((i: { id: string }) => i.id)).not.toContain(id);
  });

  it('refuses a form over the limit with 413 in the one error shape, stating the limit', async () => {
    const big = `email\n${'x@example.com\n'.repeat(Math.ceil(MAX_IMPORT_REQUEST_BYTES / 14) + 10)}`;
    const answer = await create(await formEvent(await sdkRequest({ file: new Blob([big]) })));
    expect(answer.statusCode).toBe(413);
    expect(parseBody(answer)).toMatchObject({ statusCode: 413, name: 'payload_too_large' });
    expect(parseBody(answer).message).toContain(`the limit is ${MAX_IMPORT_REQUEST_BYTES} bytes`);
  });

  it('names what does not exist: a segment, a topic, a contact property; and a form without its file', async () => {
    const unknown = newUuid();
    const bySegment = await create(
      await formEvent(await sdkRequest({ file: new Blob(['email\n']), segments: [{ id: unknown }] })),
    );
    expect(bySegment.statusCode).toBe(400);
    expect(parseBody(bySegment).message).toContain(unknown);
    const byProperty = await create(
      await formEvent(
        await sdkRequest({
          file: new Blob(['email\n']),
          columnMap: { properties: { tier: { column: 'Tier' } } },
        }),
      ),
    );
    expect(parseBody(byProperty).message).toContain('"tier" does not exist');
    const form = new FormData();
    form.append('on_conflict', 'skip');
    const noFile = await create(await formEvent(new Request('https://x/', { method: 'POST', body: form })));
    expect(parseBody(noFile).errors).toEqual([expect.objectContaining({ field: 'file' })]);
  });

  it('takes a topic given twice with one subscription as one choice, and refuses two subscriptions of it', async () => {
    const twice = await create(
      await formEvent(
        await sdkRequest({
          file: new Blob(['email\ntwice@example.com\n'], { type: 'text/csv' }),
          topics: [
            { id: TOPIC, subscription: 'opt_out' },
            { id: TOPIC, subscription: 'opt_out' },
          ],
        }),
      ),
    );
    expect(twice.statusCode).toBe(201);
    await drain();
    expect(parseBody(await get(parseBody(twice).id))).toMatchObject({
      status: 'completed',
      counts: { created: 1, failed: 0 },
    });
    const contact = await new DynamoAudienceReads(table.db, table.tableName).contactByAddress(
      'twice@example.com',
      true,
    );
    expect(
      (await new DynamoAudienceReads(table.db, table.tableName).choicesOf(contact?.id ?? '')).map(
        (c) => c.subscription,
      ),
    ).toEqual(['opt_out']);
    const conflicting = await create(
      await formEvent(
        await sdkRequest({
          file: new Blob(['email\n']),
          topics: [
            { id: TOPIC, subscription: 'opt_in' },
            { id: TOPIC, subscription: 'opt_out' },
          ],
        }),
      ),
    );
    expect(conflicting.statusCode).toBe(400);
    expect(parseBody(conflicting).message).toContain(TOPIC);
  });

  it('our upload: a presigned PUT to the local S3, then an import by upload_id', async () => {
    const started = (await makeUpload(apiDeps)(
      httpEvent({ method: 'POST', path: '/v1/contacts/imports/uploads', token }),
      context(),
    )) as Response;
    expect(started.statusCode).toBe(201);
    const upload = parseBody(started);
    const put = await fetch(upload.url, {
      method: 'PUT',
      headers: upload.headers,
      body: 'email\nup1@example.com\nup2@example.com\n',
    });
    expect(put.status).toBe(200);
    const created = await create(
      httpEvent({
        method: 'POST',
        path: '/v1/contacts/imports',
        token,
        body: { upload_id: upload.id, on_conflict: 'skip' },
      }),
    );
    expect(created.statusCode).toBe(201);
    await drain();
    expect(parseBody(await get(parseBody(created).id)).counts).toEqual({
      total: 2,
      created: 2,
      updated: 0,
      skipped: 0,
      failed: 0,
    });
    const missing = await create(
      httpEvent({ method: 'POST', path: '/v1/contacts/imports', token, body: { upload_id: newUuid() } }),
    );
    expect(missing.statusCode).toBe(400);
  });

  // Commit 3 is a chunk's part-way; commit 5 the last chunk's, which completes the import: the
  // step delivered again finds it completed and writes nothing.
  for (const [when, at] of [
    ['before', 3],
    ['after', 3],
    ['after', 5],
  ] as const)
    it(`a crash ${when} commit ${at}, the step delivered again: exact counts, no contact twice`, async () => {
      const rows = Array.from({ length: 120 }, (_, i) => `crash-${when}${at}-${i}@example.com,N${i}`);
      const request = await sdkRequest({
        file: new Blob([`email,first_name\n${rows.join('\n')}\n`]),
        segments: [{ id: SEGMENT }],
      });
      const { id } = parseBody(await create(await formEvent(request)));
      let commits = 0;
      const crashing = Object.create(store) as DynamoContactImportStore;
      crashing.commit = async (importId: string, from: number, write: ChunkWrite, to: Checkpoint) => {
        commits++;
        if (commits === at && when === 'before') throw new Error('injected crash');
        const outcome = await store.commit(importId, from, write, to);
        if (commits === at) throw new Error('injected crash');
        return outcome;
      };
      await drain(makeWorker({ store: crashing, files, queue, clock, newId: newUuid }));
      expect(commits).toBeGreaterThanOrEqual(at);
      const answer = parseBody(await get(id));
      expect(answer).toMatchObject({
        status: 'completed',
        counts: { total: 120, created: 120, updated: 0, skipped: 0, failed: 0 },
      });
      const audience = new DynamoAudienceReads(table.db, table.tableName);
      const found = await audience.contactsByAddresses(rows.map((r) => r.split(',')[0] as string));
      expect(found.size).toBe(120);
      // One contact an address, each with the first name of its row (none written twice under another id).
      const ids = new Set([...found.values()].map((c) => c.id));
      expect(ids.size).toBe(120);
    });
});
