import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { verifiedSenderDomains } from '../../functions/domains/domains.js';
import { batchIds } from '../../functions/emails/batch.js';
import { fingerprint, hashIdempotencyKey } from '../../functions/emails/idempotency.js';
import { makeHandler } from '../../functions/handlers/send-batch.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { emailContent, RecordingQueue, storeDomain } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let admin: string;
let restricted: string;
let queue: RecordingQueue;

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  const acme = await storeDomain(repos.domains, 'acme.com', 'verified');
  await storeDomain(repos.domains, 'other.com', 'verified');
  await storeDomain(repos.domains, 'pending.example', 'pending');
  const full = generateApiKey('admin', 'full_access', new Date());
  await repos.apiKeys.put(full.key);
  admin = full.token;
  const onlyAcme = generateApiKey('shop', 'sending_access', new Date(), { id: acme.id, domain: 'acme.com' });
  await repos.apiKeys.put(onlyAcme.key);
  restricted = onlyAcme.token;
});
afterAll(() => table.stop());
beforeEach(() => {
  queue = new RecordingQueue();
});

const batch = (body: unknown, headers: Record<string, string> = {}, token = admin) =>
  makeHandler({
    ...repos,
    queue,
    clock: systemClock,
    assertSenderDomain: verifiedSenderDomains(repos.domains, systemClock),
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
  })(
    httpEvent({
      method: 'POST',
      path: '/v1/emails/batch',
      routeKey: 'POST /v1/emails/batch',
      token,
      body,
      headers,
    }),
    context(),
  ) as Promise<APIGatewayProxyStructuredResultV2>;

const email = (over: Record<string, unknown> = {}) => ({
  from: 'Acme <hello@acme.com>',
  to: 'success@simulator.amazonses.com',
  subject: 'Batch',
  text: 'Hello',
  ...over,
});
/** Every email in the table (status items), however many. */
const countEmails = async () => {
  const { Count } = await table.db.send(
    new ScanCommand({
      TableName: table.tableName,
      FilterExpression: 'sk = :status',
      ExpressionAttributeValues: { ':status': 'STATUS' },
      Select: 'COUNT',
    }),
  );
  return Count ?? 0;
};

describe('POST /v1/emails/batch', () => {
  it('stores and queues each email as its own, ids in input order, with its own content', async () => {
    const response = await batch([
      email({ subject: 'one' }),
      email({ subject: 'two', tags: [{ name: 'n', value: 'v' }] }),
    ]);
    expect(response.statusCode).toBe(200);
    const { data, errors } = parseBody(response);
    expect(errors).toBeUndefined();
    expect(data).toHaveLength(2);
    expect(data[0].id < data[1].id).toBe(true);
    expect(queue.jobs.map((j) => [j.id, j.content?.subject])).toEqual([
      [data[0].id, 'one'],
      [data[1].id, 'two'],
    ]);
    expect(await repos.emails.get(data[1].id)).toMatchObject({
      status: 'queued',
      subject: 'two',
      tags: [{ name: 'n', value: 'v' }],
    });
  });

  it('strict (the default): one invalid email refuses the batch, naming 3.to; nothing is stored', async () => {
    const before = await countEmails();
    const response = await batch([email(), email(), email(), email({ to: 'nope' })]);
    expect(response.statusCode).toBe(400);
    expect(parseBody(response)).toMatchObject({
      name: 'validation_error',
      errors: [{ field: '3.to', message: expect.any(String) }],
    });
    expect(queue.jobs).toHaveLength(0);
    expect(await countEmails()).toBe(before);
  });

  it('strict: a sender domain that is not verified refuses the batch, naming 1.from', async () => {
    const before = await countEmails();
    const response = await batch([email(), email({ from: 'x@pending.example' })]);
    expect(response.statusCode).toBe(400);
    expect(parseBody(response).errors).toEqual([
      { field: '1.from', message: expect.stringContaining('pending.example') },
    ]);
    expect(await countEmails()).toBe(before);
  });

  it('permissive: sends the valid emails, and names the others by index', async () => {
    const response = await batch(
      [email(), email({ to: 'nope' }), email({ from: 'x@pending.example' }), email()],
      { 'x-batch-validation': 'permissive' },
    );
    expect(response.statusCode).toBe(200);
    const { data, errors } = parseBody(response);
    expect(data).toHaveLength(2);
    expect(errors).toEqual([
      { index: 1, message: expect.stringContaining('1.to') },
      { index: 2, message: expect.stringContaining('pending.example') },
    ]);
    expect(queue.jobs.map((j) => j.id)).toEqual(data.map((d: { id: string }) => d.id));
  });

  it('a key restricted to a domain may send only from it, per email: 403 strict, an error permissive', async () => {
    const strict = await batch([email(), email({ from: 'a@other.com' })], {}, restricted);
    expect(strict.statusCode).toBe(403);
    expect(parseBody(strict)).toMatchObject({
      name: 'restricted_api_key',
      message: expect.stringContaining('Email 1'),
    });
    const permissive = await batch(
      [email(), email({ from: 'a@other.com' })],
      { 'x-batch-validation': 'permissive' },
      restricted,
    );
    expect(parseBody(permissive)).toMatchObject({
      data: [{ id: expect.any(String) }],
      errors: [{ index: 1 }],
    });
  });

  it('Idempotency-Key: the same batch again gives the same ids and sends nothing more; another batch is 409', async () => {
    const headers = { 'idempotency-key': `batch-${Date.now()}` };
    const body = [email({ subject: 'a' }), email({ subject: 'b' })];
    const first = await batch(body, headers);
    expect(first.statusCode).toBe(200);
    const again = await batch(body, headers);
    expect(parseBody(again)).toEqual(parseBody(first));
    expect(queue.jobs).toHaveLength(2);
    expect((await batch([email({ subject: 'c' })], headers)).statusCode).toBe(409);
    // The same batch in the other validation mode is another request.
    expect((await batch(body, { ...headers, 'x-batch-validation': 'permissive' })).statusCode).toBe(409);
  });

  it('resumes a batch whose request died: the same ids, stored ones kept (a sent one not queued again), the rest stored', async () => {
    const admins = (await repos.apiKeys.list({ limit: 100, offset: 0 })).data.find((k) => k.name === 'admin');
    const body = [email({ subject: 'r0' }), email({ subject: 'r1' }), email({ subject: 'r2' })];
    const firstId = newEmailId();
    const ids = batchIds(firstId, 3);
    await repos.idempotency.begin(
      admins?.id ?? '',
      hashIdempotencyKey('died-batch'),
      fingerprint({ batch: body, mode: 'strict' }),
      firstId,
      Date.now() - 60_000,
    );
    // The request that died had stored the first email, which was sent since.
    const content = emailContent({ from: 'Acme <hello@acme.com>', subject: 'r0' });
    await repos.emails.create({ id: ids[0] as string, created_at: new Date().toISOString(), content });
    await repos.emails.markSent(ids[0] as string, 'ses-1', new Date().toISOString());
    const response = await batch(body, { 'idempotency-key': 'died-batch' });
    expect(response.statusCode).toBe(200);
    expect(parseBody(response).data.map((d: { id: string }) => d.id)).toEqual(ids);
    expect(queue.jobs.map((j) => j.id)).toEqual(ids.slice(1));
    expect((await repos.emails.get(ids[2] as string))?.subject).toBe('r2');
    expect((await repos.emails.get(ids[0] as string))?.last_event).toBe('sent');
  });

  it('a resumed batch keeps what the request that died stored, even if its sender check fails now; it moves the sweeper back first', async () => {
    const admins = (await repos.apiKeys.list({ limit: 100, offset: 0 })).data.find((k) => k.name === 'admin');
    const flaky = await storeDomain(repos.domains, 'flaky.com', 'verified');
    const body = [
      email({ from: 'a@flaky.com', subject: 'f0' }),
      email({ from: 'a@flaky.com', subject: 'f1' }),
    ];
    const firstId = newEmailId();
    const ids = batchIds(firstId, 2);
    await repos.idempotency.begin(
      admins?.id ?? '',
      hashIdempotencyKey('died-flaky'),
      fingerprint({ batch: body, mode: 'permissive' }),
      firstId,
      Date.now() - 60_000,
    );
    const content = emailContent({ from: 'a@flaky.com', subject: 'f0' });
    await repos.emails.create({ id: ids[0] as string, created_at: new Date().toISOString(), content });
    // The domain fails after the first request stored email 0.
    await repos.domains.save({ ...flaky, status: 'failed', sendable: false }, 'existing');
    const calls: string[] = [];
    const handler = makeHandler({
      ...repos,
      emails: {
        ...repos.emails,
        states: (list: string[]) => repos.emails.states(list),
        createMany: async (...args: Parameters<typeof repos.emails.createMany>) => {
          calls.push('createMany');
          return repos.emails.createMany(...args);
        },
      } as typeof repos.emails,
      sweep: {
        ...repos.sweep,
        rewind: async (id: string) => void calls.push(`rewind ${id}`),
      } as typeof repos.sweep,
      queue,
      clock: systemClock,
      assertSenderDomain: verifiedSenderDomains(repos.domains, systemClock),
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    const response = (await handler(
      httpEvent({
        method: 'POST',
        path: '/v1/emails/batch',
        routeKey: 'POST /v1/emails/batch',
        token: admin,
        body,
        headers: { 'idempotency-key': 'died-flaky', 'x-batch-validation': 'permissive' },
      }),
      context(),
    )) as APIGatewayProxyStructuredResultV2;
    expect(response.statusCode).toBe(200);
    // Email 0 was stored: it stands (and is queued, still waiting); email 1 is refused now.
    expect(parseBody(response)).toEqual({
      data: [{ id: ids[0] }],
      errors: [{ index: 1, message: expect.stringContaining('flaky.com') }],
    });
    expect(queue.jobs.map((j) => j.id)).toEqual([ids[0]]);
    expect(calls[0]).toBe(`rewind ${firstId}`);
  });

  it("takes a body over a single send's 256 KiB, up to 5 MiB; each email at most 256 KiB, named by index", async () => {
    const html = `<p>${'x'.repeat(150 * 1024)}</p>`;
    const two = await batch([email({ html }), email({ html })]);
    expect(two.statusCode).toBe(200);
    const tooBig = await batch([email(), email({ html: `<p>${'x'.repeat(257 * 1024)}</p>` })]);
    expect(tooBig.statusCode).toBe(400);
    expect(parseBody(tooBig).errors).toEqual([
      { field: '1', message: expect.stringContaining('at most 262144 bytes') },
    ]);
    const huge = await batch(
      Array.from({ length: 24 }, () => email({ html: `<p>${'x'.repeat(220 * 1024)}</p>` })),
    );
    expect(huge.statusCode).toBe(413);
  });

  it("counts as one request against the key's rate limit, however many emails it holds", async () => {
    const now = Date.now() + 3_600_000; // a second of its own
    const limited = makeHandler({
      ...repos,
      queue,
      clock: { now: () => new Date(now) },
      assertSenderDomain: verifiedSenderDomains(repos.domains, systemClock),
      rateLimit: { perSecond: 2 },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    const call = () =>
      limited(
        httpEvent({
          method: 'POST',
          path: '/v1/emails/batch',
          routeKey: 'POST /v1/emails/batch',
          token: restricted,
          body: Array.from({ length: 5 }, () => email()),
        }),
        context(),
      ) as Promise<APIGatewayProxyStructuredResultV2>;
    const first = await call();
    expect(first.statusCode).toBe(200);
    expect(first.headers?.['ratelimit-remaining']).toBe('1');
    expect((await call()).statusCode).toBe(200);
    expect((await call()).statusCode).toBe(429);
    expect(queue.jobs).toHaveLength(10);
  });

  it('a batch of 100 is a handful of batch writes, not 100 round trips', async () => {
    const spy = vi.spyOn(table.db, 'send');
    try {
      const response = await batch(Array.from({ length: 100 }, (_, i) => email({ subject: `n${i}` })));
      expect(response.statusCode).toBe(200);
      const writes = spy.mock.calls.filter(([command]) => command instanceof BatchWriteCommand);
      // 200 summaries and bodies, then 100 status items, 25 a call, the calls of each phase side by side.
      expect(writes).toHaveLength(12);
      const statusWrites = writes
        .slice(8)
        .flatMap(([command]) =>
          Object.values((command as BatchWriteCommand).input.RequestItems ?? {}).flat(),
        );
      expect(statusWrites.every((w) => w.PutRequest?.Item?.sk === 'STATUS')).toBe(true);
      const names = spy.mock.calls.map(([command]) => command.constructor.name);
      expect(names.filter((n) => n === 'PutCommand')).toHaveLength(0);
      expect(parseBody(response).data).toHaveLength(100);
      expect(queue.jobs).toHaveLength(100);
    } finally {
      spy.mockRestore();
    }
  });
});
