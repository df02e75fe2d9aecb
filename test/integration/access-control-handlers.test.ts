import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { generateApiKey, type Permission } from '../../functions/api-keys/model.js';
import { verifiedSenderDomains } from '../../functions/domains/domains.js';
import type { DomainIdentity } from '../../functions/domains/model.js';
import type { SendingIdentities } from '../../functions/domains/ports.js';
import { log, logger } from '../../functions/observability/logger.js';
import { FALLBACK_HANDLER, API_ROUTES as ROUTES } from '../../functions/routes.js';
import type { Clock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { RecordingQueue, storeDomain } from '../support/fakes.js';
import { emailIdCreatedAt } from '../support/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

type Response = APIGatewayProxyStructuredResultV2;
type Lambda = (event: ReturnType<typeof httpEvent>, context: Context) => Promise<Response>;

/** SES identities as a fake: the domain handlers' own SES behaviour is tested in domain-handlers.test.ts. */
const identities: SendingIdentities = {
  create: async (): Promise<DomainIdentity> => ({ status: 'pending', sendable: false, records: [] }),
  get: async () => ({ status: 'pending', sendable: false, records: [] }),
  delete: async () => undefined,
};

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let now = Date.parse('2026-11-22T10:00:00.250Z');
const clock: Clock = { now: () => new Date(now) };
const logged: string[] = [];
const recordingLog = {
  info: (...args: unknown[]) => void logged.push(JSON.stringify(args)),
  warn: (...args: unknown[]) => void logged.push(JSON.stringify(args)),
  error: (...args: unknown[]) => void logged.push(JSON.stringify(args)),
};
let queue: RecordingQueue;
// biome-ignore lint/suspicious/noExplicitAny: one set of dependencies serves every handler's makeHandler
let deps: any;
const handlers: Record<string, Lambda> = {};
let acme: { id: string };
let other: { id: string };

async function newKey(permission: Permission, domain?: { id: string; domain: string }) {
  const { key, token } = generateApiKey(`${permission} key`, permission, new Date(now), domain);
  await repos.apiKeys.put(key);
  return { key, token };
}

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  acme = await storeDomain(repos.domains, 'acme.com', 'verified');
  other = await storeDomain(repos.domains, 'other.com', 'verified');
  queue = new RecordingQueue();
  const audience = new DynamoAudienceReads(table.db, table.tableName);
  deps = {
    ...repos,
    // The audience's reads, under both names its handlers take them by: without them a contact or
    // segment route given a full-access key failed in a promise nobody awaited (an unhandled rejection).
    reads: audience,
    audience,
    identities,
    queue,
    clock,
    log: recordingLog,
    rateLimit: { perSecond: 10 },
    assertSenderDomain: verifiedSenderDomains(repos.domains, clock),
  };
  for (const name of [...ROUTES.map((r) => r.handler), FALLBACK_HANDLER]) {
    const module = (await import(`../../functions/handlers/${name}.ts`)) as {
      makeHandler: (d: unknown) => Lambda;
    };
    handlers[name] = module.makeHandler(deps);
  }
});
afterAll(() => table.stop());
beforeEach(() => {
  // Each test in its own second, so earlier requests do not count against its rate limit.
  now += 10_000;
  logged.length = 0;
});

const email = {
  from: 'Acme <hello@acme.com>',
  to: 'success@simulator.amazonses.com',
  subject: 'Hi',
  text: 'x',
};
const SAMPLE_BODIES: Record<string, unknown> = {
  'send-email': email,
  'create-domain': { domain: 'matrix.example' },
  'create-api-key': { name: 'made by the matrix' },
  'update-api-key': { name: 'renamed by the matrix' },
};

/** A request to a route as API Gateway sends it, with sample ids and bodies. */
function call(
  route: (typeof ROUTES)[number],
  token: string,
  extra: { headers?: Record<string, string>; body?: unknown } = {},
) {
  const pathParameters = route.path.includes('{id}') ? { id: 'dom_01m80n2x4cf0t8d1v2kq7w5mzs' } : undefined;
  const handler = handlers[route.handler] as Lambda;
  return handler(
    httpEvent({
      method: route.method,
      path: route.path.replace('{id}', 'dom_01m80n2x4cf0t8d1v2kq7w5mzs'),
      routeKey: `${route.method} ${route.path}`,
      token,
      pathParameters,
      headers: extra.headers,
      body: extra.body ?? SAMPLE_BODIES[route.handler],
    }),
    context(),
  );
}

const route = (handler: string) => ROUTES.find((r) => r.handler === handler) as (typeof ROUTES)[number];

describe('every endpoint × every permission (generated from the route table)', () => {
  const cases = ROUTES.flatMap((r) =>
    (['full_access', 'sending_access', 'sending_access+domain'] as const).map((kind) => ({ r, kind })),
  );
  it.each(cases)('$r.method $r.path with a $kind key', async ({ r, kind }) => {
    const { token } = await newKey(
      kind === 'full_access' ? 'full_access' : 'sending_access',
      kind === 'sending_access+domain' ? { id: acme.id, domain: 'acme.com' } : undefined,
    );
    const response = await call(r, token);
    const allowed = kind === 'full_access' || r.permission === 'sending_access';
    if (allowed) {
      expect(response.statusCode, response.body).not.toBe(403);
      expect(response.statusCode).not.toBe(401);
    } else {
      expect(response.statusCode).toBe(403);
      expect(parseBody(response)).toMatchObject({ statusCode: 403, name: 'restricted_api_key' });
      expect(parseBody(response).message).toContain('sending_access');
    }
    // Whatever the outcome, an authenticated response says where the key stands.
    expect(response.headers?.['ratelimit-limit']).toBe('10');
  });

  it('a sending key restricted to a domain sends only from that domain (403 from another)', async () => {
    const { token } = await newKey('sending_access', { id: acme.id, domain: 'acme.com' });
    expect((await call(route('send-email'), token)).statusCode).toBe(200);
    const refused = await call(route('send-email'), token, { body: { ...email, from: 'x@other.com' } });
    expect(refused.statusCode).toBe(403);
    expect(parseBody(refused)).toMatchObject({ name: 'restricted_api_key' });
    expect(parseBody(refused).message).toContain('acme.com');
    // An unrestricted sending key may send from any verified domain.
    const free = await newKey('sending_access');
    expect(
      (await call(route('send-email'), free.token, { body: { ...email, from: 'x@other.com' } })).statusCode,
    ).toBe(200);
    expect(other.id).toMatch(/^dom_/);
  });
});

describe('API keys', () => {
  it('POST creates a key whose token is returned once and stored nowhere; it works at once', async () => {
    const { token: admin } = await newKey('full_access');
    const created = await call(route('create-api-key'), admin, {
      body: { name: 'shop', permission: 'sending_access', domain_id: acme.id },
    });
    expect(created.statusCode).toBe(201);
    const body = parseBody(created);
    expect(Object.keys(body).sort()).toEqual(['id', 'object', 'token']);
    expect(body.object).toBe('api_key');
    expect(body.id).toMatch(/^key_[0-9a-z]{26}$/);
    expect(body.token).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    // Nothing in the table holds the token.
    const { Items } = await table.client.send(
      new (await import('@aws-sdk/client-dynamodb')).ScanCommand({ TableName: table.tableName }),
    );
    expect(JSON.stringify(Items)).not.toContain(body.token);
    expect((await call(route('send-email'), body.token)).statusCode).toBe(200);
  });

  it('GET lists keys without token or hash, with domain_id and last_used_at', async () => {
    const { token: admin, key } = await newKey('full_access');
    const { key: sender } = await newKey('sending_access', { id: acme.id, domain: 'acme.com' });
    const listed = await call(route('list-api-keys'), admin, {});
    expect(listed.statusCode).toBe(200);
    const body = parseBody(listed);
    expect(body).toMatchObject({ object: 'list', has_more: expect.any(Boolean) });
    const mine = body.data.find((k: { id: string }) => k.id === key.id);
    expect(Object.keys(mine).sort()).toEqual(
      ['created_at', 'domain_id', 'id', 'last_used_at', 'name', 'object', 'permission'].sort(),
    );
    expect(mine).toMatchObject({ object: 'api_key', permission: 'full_access', domain_id: null });
    // The admin key was just used for this very request.
    expect(mine.last_used_at).toBe(new Date(now).toISOString());
    expect(body.data.find((k: { id: string }) => k.id === sender.id)).toMatchObject({
      permission: 'sending_access',
      domain_id: acme.id,
      last_used_at: null,
    });
    expect(listed.body).not.toMatch(/esk_|"hash"|[0-9a-f]{64}/);
  });

  it('PATCH renames a key, and only its name; 404 for an unknown or revoked key, 400 for a bad name', async () => {
    const { token: admin } = await newKey('full_access');
    const { token: sender, key } = await newKey('sending_access', { id: acme.id, domain: 'acme.com' });
    const patch = (id: string, body: unknown) =>
      (handlers['update-api-key'] as Lambda)(
        httpEvent({
          method: 'PATCH',
          path: `/v1/api-keys/${id}`,
          routeKey: 'PATCH /v1/api-keys/{id}',
          token: admin,
          pathParameters: { id },
          body,
        }),
        context(),
      );
    const renamed = await patch(key.id, { name: '  checkout  ' });
    expect(renamed.statusCode).toBe(200);
    expect(parseBody(renamed)).toEqual({ object: 'api_key', id: key.id });
    const listed = parseBody(await call(route('list-api-keys'), admin, {}));
    expect(listed.data.find((k: { id: string }) => k.id === key.id)).toMatchObject({
      name: 'checkout',
      permission: 'sending_access',
      domain_id: acme.id,
    });
    expect((await call(route('send-email'), sender)).statusCode).toBe(200); // its token still works
    for (const body of [
      { name: '' },
      { name: 'x'.repeat(51) },
      {},
      { name: 'ok', permission: 'full_access' },
    ])
      expect((await patch(key.id, body)).statusCode, JSON.stringify(body)).toBe(400);
    expect((await patch('key_01m80n2x4cf0t8d1v2kq7w5mzs', { name: 'ghost' })).statusCode).toBe(404);
    expect((await patch('nope', { name: 'ghost' })).statusCode).toBe(404);
    await repos.apiKeys.deleteByHash(key.hash);
    expect((await patch(key.id, { name: 'back from the dead?' })).statusCode).toBe(404);
    expect(await repos.apiKeys.findByHash(key.hash)).toBeNull();
  });

  it('DELETE revokes: the next request with that key gets the same 401 as an unknown key', async () => {
    const { token: admin } = await newKey('full_access');
    const { token: victim, key } = await newKey('sending_access');
    expect((await call(route('send-email'), victim)).statusCode).toBe(200);
    const revoke = () =>
      (handlers['delete-api-key'] as Lambda)(
        httpEvent({
          method: 'DELETE',
          path: `/v1/api-keys/${key.id}`,
          routeKey: 'DELETE /v1/api-keys/{id}',
          token: admin,
          pathParameters: { id: key.id },
        }),
        context(),
      );
    const deleted = await revoke();
    expect(deleted.statusCode).toBe(200);
    expect(parseBody(deleted)).toEqual({ object: 'api_key', id: key.id, deleted: true });
    const revoked = await call(route('send-email'), victim);
    const unknown = await call(route('send-email'), `esk_${'x'.repeat(43)}`);
    expect(revoked.statusCode).toBe(401);
    expect(revoked.body).toBe(unknown.body);
    const again = await revoke();
    expect(again.statusCode).toBe(404);
  });

  it('400 for a domain_id that is no domain of this service, or on a full-access key', async () => {
    const { token: admin } = await newKey('full_access');
    const unknown = await call(route('create-api-key'), admin, {
      body: { name: 'x', permission: 'sending_access', domain_id: 'dom_01m80n2x4cf0t8d1v2kq7w5mzs' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(parseBody(unknown).errors[0].field).toBe('domain_id');
    const full = await call(route('create-api-key'), admin, { body: { name: 'x', domain_id: acme.id } });
    expect(full.statusCode).toBe(400);
  });
});

describe('per-key rate limit', () => {
  it('10 per second per key, with headers on every response; 429 with Retry-After beyond; the next second is free', async () => {
    const { token } = await newKey('full_access');
    const { token: neighbour } = await newKey('full_access');
    const list = route('list-emails');
    const responses: Response[] = [];
    for (let i = 0; i < 12; i++) responses.push(await call(list, token, {}));
    expect(responses.map((r) => r.statusCode)).toEqual([...Array(10).fill(200), 429, 429]);
    expect(responses.map((r) => r.headers?.['ratelimit-remaining'])).toEqual([
      '9',
      '8',
      '7',
      '6',
      '5',
      '4',
      '3',
      '2',
      '1',
      '0',
      '0',
      '0',
    ]);
    const limited = responses[10] as Response;
    expect(parseBody(limited)).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
    expect(limited.headers).toMatchObject({
      'retry-after': '1',
      'ratelimit-limit': '10',
      'ratelimit-reset': '1',
    });
    // Another key has its own budget.
    expect((await call(list, neighbour, {})).statusCode).toBe(200);
    now += 1000;
    expect((await call(list, token, {})).statusCode).toBe(200);
  });

  it('costs one write per request (and one read the first time an instance sees the key); an unknown token costs a read, never a write', async () => {
    const { token, key } = await newKey('full_access');
    const commands: string[] = [];
    const counting = Object.assign(Object.create(table.db), {
      send: (command: { constructor: { name: string } }) => {
        commands.push(command.constructor.name.replace(/Command$/, ''));
        return table.db.send(command as never);
      },
    });
    const apiKeys = new DynamoApiKeyRepository(counting, table.tableName);
    const handler = (await import('../../functions/handlers/list-emails.js')).makeHandler({
      ...deps,
      apiKeys,
    });
    for (let i = 0; i < 3; i++) {
      now += 400; // over two windows: a start, an add, a start
      const response = await handler(httpEvent({ method: 'GET', path: '/v1/emails', token }), context());
      expect(response.statusCode).toBe(200);
    }
    expect(commands).toEqual(['Get', 'Update', 'Update', 'Update']);
    expect((await repos.apiKeys.findByHash(key.hash))?.last_used_at).toBe(new Date(now).toISOString());
    commands.length = 0;
    const unknown = `esk_${'u'.repeat(43)}`;
    expect(
      (await handler(httpEvent({ method: 'GET', path: '/v1/emails', token: unknown }), context())).statusCode,
    ).toBe(401);
    expect(commands).toEqual(['Get']);
  });

  /** Puts a count in a key's rate window, as another instance left it. */
  const setKeyWindow = (hash: string, window: number, count: number) =>
    table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: `APIKEY#${hash}`, sk: 'APIKEY' },
        UpdateExpression: 'SET #c = :c',
        ExpressionAttributeNames: { '#c': `rc${window}` },
        ExpressionAttributeValues: { ':c': count },
      }),
    );
  const keyItem = async (hash: string) =>
    (
      await table.db.send(
        new GetCommand({ TableName: table.tableName, Key: { pk: `APIKEY#${hash}`, sk: 'APIKEY' } }),
      )
    ).Item ?? {};

  it('a clock far ahead on one instance cannot lock a key out, and its count is cleared', async () => {
    const { token, key } = await newKey('full_access');
    const list = (await import('../../functions/handlers/list-emails.js')).makeHandler(deps);
    expect((await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context())).statusCode).toBe(
      200,
    );
    // Another instance, its clock an hour ahead, counted the key into its window, to the limit.
    const ahead = Math.floor(now / 1000) + 3600;
    await setKeyWindow(key.hash, ahead, 10);
    const response = await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context());
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['ratelimit-remaining']).toBe('8');
    // The count far ahead, seen in that write's answer, is removed by the next.
    await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context());
    expect(Object.keys(await keyItem(key.hash))).not.toContain(`rc${ahead}`);
  });

  it('a request late past its window counts in its own window, and is not refused for later ones', async () => {
    const { token, key } = await newKey('full_access');
    const list = (await import('../../functions/handlers/list-emails.js')).makeHandler(deps);
    expect((await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context())).statusCode).toBe(
      200,
    );
    // Requests three seconds later were counted first, to the limit (this one waited, say, behind a busy instance).
    await setKeyWindow(key.hash, Math.floor(now / 1000) + 3, 10);
    const response = await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context());
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['ratelimit-remaining']).toBe('8');
  });

  it('when its write is refused (the item being replaced), a key that exists still works; a gone one does not', async () => {
    const { key } = await newKey('full_access');
    const refusing = Object.assign(Object.create(table.db), {
      send: (command: { constructor: { name: string } }) =>
        command.constructor.name === 'UpdateCommand'
          ? Promise.reject(Object.assign(new Error('moved'), { name: 'ConditionalCheckFailedException' }))
          : table.db.send(command as never),
    });
    const apiKeys = new DynamoApiKeyRepository(refusing, table.tableName);
    const found = await apiKeys.authenticate(key.hash, Math.floor(now / 1000), new Date(now).toISOString());
    expect(found).toMatchObject({ key: { id: key.id } });
    await repos.apiKeys.deleteByHash(key.hash);
    expect(
      await apiKeys.authenticate(key.hash, Math.floor(now / 1000), new Date(now).toISOString()),
    ).toBeNull();
  });

  it('counts every instance’s requests in one window: two instances share the limit', async () => {
    const { token } = await newKey('full_access');
    // Two function instances, each with its own repository (its own memory of windows).
    const instance = async () =>
      (await import('../../functions/handlers/list-emails.js')).makeHandler({
        ...deps,
        apiKeys: createRepositories(table.tableName, table.db).apiKeys,
      });
    const [a, b] = [await instance(), await instance()];
    const codes: number[] = [];
    for (let i = 0; i < 12; i++)
      codes.push(
        (await (i % 2 ? a : b)(httpEvent({ method: 'GET', path: '/v1/emails', token }), context()))
          .statusCode ?? 0,
      );
    expect(codes.filter((c) => c === 200)).toHaveLength(10);
    expect(codes.slice(10)).toEqual([429, 429]);
  });

  it('a revoked key is refused at its next request, even within a window it was counted in', async () => {
    const { token, key } = await newKey('full_access');
    const list = (await import('../../functions/handlers/list-emails.js')).makeHandler(deps);
    expect((await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context())).statusCode).toBe(
      200,
    );
    await repos.apiKeys.deleteByHash(key.hash);
    expect((await list(httpEvent({ method: 'GET', path: '/v1/emails', token }), context())).statusCode).toBe(
      401,
    );
    // And never brought back by the write that counts.
    expect(await repos.apiKeys.findByHash(key.hash)).toBeNull();
  });
});

describe('when the key item cannot be written', () => {
  it('answers 500 in the error shape (it cannot tell whether the key exists), and logs why without the key', async () => {
    const { token } = await newKey('full_access');
    const handler = (await import('../../functions/handlers/list-emails.js')).makeHandler({
      ...deps,
      apiKeys: Object.assign(Object.create(repos.apiKeys), {
        authenticate: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')),
      }),
    });
    const response = await handler(httpEvent({ method: 'GET', path: '/v1/emails', token }), context());
    expect(response.statusCode).toBe(500);
    expect(parseBody(response)).toMatchObject({ statusCode: 500, name: 'internal_server_error' });
    expect(logged.join('\n')).toContain('unhandled error');
    expect(logged.join('\n')).not.toContain(token);
  });
});

describe('Idempotency-Key on POST /v1/emails', () => {
  const send = (token: string, key: string | undefined, body: unknown = email) =>
    call(route('send-email'), token, { body, headers: key === undefined ? {} : { 'idempotency-key': key } });

  it('the same key and body give the same email and status code, and send once', async () => {
    const { token } = await newKey('sending_access');
    const jobs = queue.jobs.length;
    const first = await send(token, 'order-1');
    const again = await send(token, 'order-1', { text: 'x', subject: 'Hi', to: email.to, from: email.from });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(parseBody(again)).toEqual(parseBody(first));
    expect(queue.jobs.length).toBe(jobs + 1);
  });

  it('keys are per API key: another key may use the same Idempotency-Key', async () => {
    const a = await newKey('sending_access');
    const b = await newKey('sending_access');
    const first = parseBody(await send(a.token, 'shared'));
    const second = parseBody(await send(b.token, 'shared'));
    expect(second.id).not.toBe(first.id);
  });

  it('409 invalid_idempotent_request for the same key with another body', async () => {
    const { token } = await newKey('sending_access');
    await send(token, 'order-2');
    const other = await send(token, 'order-2', { ...email, subject: 'Different' });
    expect(other.statusCode).toBe(409);
    expect(parseBody(other)).toMatchObject({ name: 'invalid_idempotent_request' });
  });

  it('two concurrent requests with one key: one email; the other 409 or the same answer', async () => {
    const { token } = await newKey('sending_access');
    const jobs = queue.jobs.length;
    const results = await Promise.all(Array.from({ length: 5 }, () => send(token, 'race')));
    const ok = results.filter((r) => r.statusCode === 200).map((r) => parseBody(r).id);
    expect(new Set(ok).size).toBe(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) {
      expect(r.statusCode).toBe(409);
      expect(parseBody(r).name).toBe('concurrent_idempotent_requests');
    }
    expect(queue.jobs.length).toBe(jobs + 1);
  });

  it('400 invalid_idempotency_key for an empty or over-long key', async () => {
    const { token } = await newKey('sending_access');
    for (const key of ['', 'k'.repeat(257)]) {
      const response = await send(token, key);
      expect(response.statusCode).toBe(400);
      expect(parseBody(response).name).toBe('invalid_idempotency_key');
    }
    expect((await send(token, 'k'.repeat(256))).statusCode).toBe(200);
  });

  it('a request that fails (500: the email could not be stored) gives the key back, so the retry sends', async () => {
    const { token } = await newKey('sending_access');
    const storeDown = (await import('../../functions/handlers/send-email.js')).makeHandler({
      ...deps,
      emails: Object.assign(Object.create(repos.emails), {
        create: async () => Promise.reject(new Error('table down')),
      }),
    });
    const failed = await storeDown(
      httpEvent({
        method: 'POST',
        path: '/v1/emails',
        token,
        body: email,
        headers: { 'idempotency-key': 'retry-me' },
      }),
      context(),
    );
    expect(failed.statusCode).toBe(500);
    const retry = await send(token, 'retry-me');
    expect(retry.statusCode).toBe(200);
    expect(await repos.emails.getState(parseBody(retry).id)).toMatchObject({ status: 'queued' });
  });

  it('a retry after the scheduled time has passed gets the first answer, not "in the past"', async () => {
    const { token } = await newKey('full_access');
    const due = new Date(now + 30_000).toISOString();
    const body = { ...email, scheduled_at: due };
    const first = await send(token, 'remind-at-ten', body);
    expect(first.statusCode).toBe(200);
    now += 60_000; // the answer was lost; the client retries a minute later
    const retry = await send(token, 'remind-at-ten', body);
    expect(retry.statusCode).toBe(200);
    expect(parseBody(retry)).toEqual(parseBody(first));
    expect(parseBody(retry).scheduled_at).toBe(due);
    // The same body as a new request (another key) is read against the time now: refused.
    const fresh = await send(token, 'another-key', body);
    expect(fresh.statusCode).toBe(400);
    expect(parseBody(fresh).message).toContain('in the past');
    // …and that refusal gave its key back: corrected, the same key is a new request.
    const corrected = await send(token, 'another-key', { ...email, scheduled_at: 'in 1 hour' });
    expect(corrected.statusCode).toBe(200);
  });

  it('a batch retried after its scheduled times have passed gets the first answer', async () => {
    const { token } = await newKey('full_access');
    const due = new Date(now + 30_000).toISOString();
    const batch = [
      { ...email, scheduled_at: due },
      { ...email, subject: 'Second' },
    ];
    const sendBatch = () =>
      call(route('send-batch'), token, { body: batch, headers: { 'idempotency-key': 'batch-at-ten' } });
    const first = await sendBatch();
    expect(first.statusCode).toBe(200);
    now += 60_000;
    const retry = await sendBatch();
    expect(retry.statusCode).toBe(200);
    expect(parseBody(retry)).toEqual(parseBody(first));
  });

  it('a refused send (400: the sender domain is not verified) gives the key back too; a 409 keeps it', async () => {
    const { token } = await newKey('sending_access');
    const unverified = { ...email, from: 'a@not-a-domain-here.com' };
    expect((await send(token, 'fix-then-retry', unverified)).statusCode).toBe(400);
    // The key is free again: the same key with a corrected body is a new request, not a mismatch.
    const fixed = await send(token, 'fix-then-retry');
    expect(fixed.statusCode).toBe(200);
    expect((await send(token, 'fix-then-retry', unverified)).statusCode).toBe(409);
    expect(parseBody(await send(token, 'fix-then-retry')).id).toBe(parseBody(fixed).id);
  });

  it('the queue refusing is not a failure: the email is stored, the key answers it, the sweeper queues it', async () => {
    const { token } = await newKey('sending_access');
    queue.failWith = new Error('queue down');
    try {
      const first = await send(token, 'queue-down');
      expect(first.statusCode).toBe(200);
      queue.failWith = undefined;
      const again = await send(token, 'queue-down');
      expect(parseBody(again)).toEqual(parseBody(first));
    } finally {
      queue.failWith = undefined;
    }
  });

  it('a request that died holding the key is finished by a retry under the same email id, queued again', async () => {
    const { token, key } = await newKey('sending_access');
    const { hashIdempotencyKey, fingerprint } = await import('../../functions/emails/idempotency.js');
    const { newEmailId } = await import('../../functions/shared/ids.js');
    // As if a request had stored the email and died before queueing it or answering.
    const id = newEmailId();
    await repos.idempotency.begin(
      key.id,
      hashIdempotencyKey('crashed'),
      fingerprint(email),
      id,
      now - 60_000,
    );
    const { parseInput } = await import('../../functions/http/middleware.js');
    const { sendEmailSchema, toContent } = await import('../../functions/emails/email.js');
    await repos.emails.create({
      id,
      created_at: new Date(now - 60_000).toISOString(),
      content: toContent(parseInput(sendEmailSchema, email)),
    });
    const jobs = queue.jobs.length;
    const retry = await send(token, 'crashed');
    expect(retry.statusCode).toBe(200);
    expect(parseBody(retry).id).toBe(id);
    expect(queue.jobs.slice(jobs).map((j) => j.id)).toEqual([id]);
  });

  const sendWith = async (over: Record<string, unknown>, token: string, key: string) =>
    (await import('../../functions/handlers/send-email.js')).makeHandler({ ...deps, ...over })(
      httpEvent({
        method: 'POST',
        path: '/v1/emails',
        token,
        body: email,
        headers: { 'idempotency-key': key },
      }),
      context(),
    );
  /** The email repository, with `create` storing the email and then failing as if its answer were lost. */
  const lostAnswer = () =>
    Object.assign(Object.create(repos.emails), {
      create: async (email: Parameters<typeof repos.emails.create>[0]) => {
        await repos.emails.create(email);
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      },
    });

  it('a store that landed although its answer was lost is a 200, and the key keeps it: a retry sends nothing more', async () => {
    const { token } = await newKey('sending_access');
    const jobs = queue.jobs.length;
    const first = await sendWith({ emails: lostAnswer() }, token, 'lost-answer');
    expect(first.statusCode).toBe(200);
    const { id } = parseBody(first);
    expect(await repos.emails.getState(id)).toMatchObject({ status: 'queued' });
    const retry = await send(token, 'lost-answer');
    expect(parseBody(retry).id).toBe(id);
    expect(queue.jobs.slice(jobs).map((j) => j.id)).toEqual([id]);
    // Without a key as well: 200, not a 500 that would make the client send it again.
    const plain = await (await import('../../functions/handlers/send-email.js')).makeHandler({
      ...deps,
      emails: lostAnswer(),
    })(httpEvent({ method: 'POST', path: '/v1/emails', token, body: email }), context());
    expect(plain.statusCode).toBe(200);
  });

  it('when the table cannot tell whether the email was stored: 500, and the key stays held (a retry resumes)', async () => {
    const { token } = await newKey('sending_access');
    const down = Object.assign(Object.create(repos.emails), {
      create: async () => Promise.reject(new Error('table down')),
      getState: async () => Promise.reject(new Error('table down')),
    });
    expect((await sendWith({ emails: down }, token, 'cannot-tell')).statusCode).toBe(500);
    const retry = await send(token, 'cannot-tell');
    expect(retry.statusCode).toBe(409);
    expect(parseBody(retry).name).toBe('concurrent_idempotent_requests');
  });

  it('when storing the answer fails, the email is still answered 200', async () => {
    const { token } = await newKey('sending_access');
    const idempotency = Object.assign(Object.create(repos.idempotency), {
      complete: async () => Promise.reject(new Error('table throttled')),
    });
    const response = await sendWith({ idempotency }, token, 'complete-fails');
    expect(response.statusCode).toBe(200);
    expect(await repos.emails.getState(parseBody(response).id)).toMatchObject({ status: 'queued' });
  });

  it("resuming a request that died before storing its email stores it under the key's id, and moves the sweeper back to it", async () => {
    const { token, key } = await newKey('sending_access');
    const { hashIdempotencyKey, fingerprint } = await import('../../functions/emails/idempotency.js');
    const { emailIdAt } = await import('../../functions/shared/ids.js');
    const oldId = emailIdCreatedAt(Date.now() - 3_600_000);
    await repos.idempotency.begin(
      key.id,
      hashIdempotencyKey('died-early'),
      fingerprint(email),
      oldId,
      now - 3_600_000,
    );
    // The sweeper has long since looked past ids that old.
    const ahead = { ...(await repos.sweep.progress()), fromId: emailIdAt(Date.now()), oldCheckedAtMs: 0 };
    expect(await repos.sweep.saveProgress(ahead, await repos.sweep.progress())).toBe(true);
    const retry = await send(token, 'died-early');
    expect(retry.statusCode).toBe(200);
    expect(parseBody(retry).id).toBe(oldId);
    expect(await repos.emails.getState(oldId)).toMatchObject({ status: 'queued' });
    expect((await repos.sweep.progress()).fromId).toBe(oldId);
    expect(parseBody(await send(token, 'died-early')).id).toBe(oldId);
  });

  it('a first request that was only slow, and stores after a retry resumed it, still makes one email', async () => {
    const { token } = await newKey('sending_access');
    let retried: Awaited<ReturnType<typeof send>> | undefined;
    const slow = Object.assign(Object.create(repos.emails), {
      create: async (stored: Parameters<typeof repos.emails.create>[0]) => {
        // Stalled here past its lease: the client's retry resumes the key and stores the email first.
        now += 31_000;
        retried = await send(token, 'slow-first');
        return repos.emails.create(stored);
      },
    });
    const first = await sendWith({ emails: slow }, token, 'slow-first');
    expect(first.statusCode).toBe(200);
    expect(retried?.statusCode).toBe(200);
    expect(parseBody(first).id).toBe(parseBody(retried as never).id);
  });

  it("resuming a request whose email went on meanwhile answers the email's status now, and queues nothing", async () => {
    const { token, key } = await newKey('sending_access');
    const { hashIdempotencyKey, fingerprint } = await import('../../functions/emails/idempotency.js');
    const { newEmailId } = await import('../../functions/shared/ids.js');
    const { parseInput } = await import('../../functions/http/middleware.js');
    const { sendEmailSchema, toContent } = await import('../../functions/emails/email.js');
    const id = newEmailId();
    await repos.idempotency.begin(
      key.id,
      hashIdempotencyKey('went-on'),
      fingerprint(email),
      id,
      now - 60_000,
    );
    await repos.emails.create({
      id,
      created_at: new Date(now - 60_000).toISOString(),
      content: toContent(parseInput(sendEmailSchema, email)),
    });
    await repos.emails.finish(id, 'delivered', new Date(now - 30_000).toISOString());
    const jobs = queue.jobs.length;
    const retry = await send(token, 'went-on');
    expect(parseBody(retry)).toEqual({
      id,
      status: 'delivered',
      created_at: new Date(now - 60_000).toISOString(),
    });
    expect(queue.jobs.length).toBe(jobs);
  });

  it("a claim retried by the SDK after its answer was lost is still the request's own: new, not a 409", async () => {
    const { hashIdempotencyKey } = await import('../../functions/emails/idempotency.js');
    const keyHash = hashIdempotencyKey('lost-begin');
    expect((await repos.idempotency.begin('scope', keyHash, 'print', 'em_mine', now)).outcome).toBe('new');
    // The same PutItem again, as the SDK's retry sends it: it finds its own first try.
    expect((await repos.idempotency.begin('scope', keyHash, 'print', 'em_mine', now)).outcome).toBe('new');
    // Another request with the key, meanwhile: in progress, as before.
    expect((await repos.idempotency.begin('scope', keyHash, 'print', 'em_other', now)).outcome).toBe(
      'in_progress',
    );
  });

  it("completes a key only for its own email: a key taken over meanwhile keeps the other request's answer", async () => {
    const { hashIdempotencyKey } = await import('../../functions/emails/idempotency.js');
    const keyHash = hashIdempotencyKey('taken-over');
    await repos.idempotency.begin('scope', keyHash, 'print', 'em_first', now);
    await repos.idempotency.abandon('scope', keyHash, 'em_first');
    await repos.idempotency.begin('scope', keyHash, 'print', 'em_second', now);
    expect(
      await repos.idempotency.complete('scope', keyHash, 'em_first', { statusCode: 200, body: 'first' }),
    ).toBe(false);
    expect(
      await repos.idempotency.complete('scope', keyHash, 'em_second', { statusCode: 200, body: 'second' }),
    ).toBe(true);
    expect(await repos.idempotency.begin('scope', keyHash, 'print', 'em_third', now)).toEqual({
      outcome: 'replay',
      response: { statusCode: 200, body: 'second' },
    });
  });
});

describe('refused before any work', () => {
  it('deeply nested JSON gets 400 without a key lookup, like an oversized body gets 413', async () => {
    let lookups = 0;
    const counting = {
      ...repos.apiKeys,
      findByHash: async (hash: string) => {
        lookups++;
        return repos.apiKeys.findByHash(hash);
      },
    };
    const handler = (await import('../../functions/handlers/send-email.js')).makeHandler({
      ...deps,
      apiKeys: counting as never,
    });
    const nested = `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const response = await handler(
      httpEvent({ method: 'POST', path: '/v1/emails', token: `esk_${'y'.repeat(43)}`, body: nested }),
      context(),
    );
    expect(response.statusCode).toBe(400);
    expect(parseBody(response).message).toContain('nests deeper than 32');
    expect(lookups).toBe(0);
  });
});

describe('secrets stay out of logs', () => {
  /**
   * Over the real logger: what Powertools writes to stdout (what CloudWatch keeps), with the Lambda
   * context in every line, at DEBUG, while requests succeed, fail, are refused and are limited.
   */
  it('no token, hash or Authorization header is logged, whatever the outcome', async () => {
    const { token, key } = await newKey('sending_access');
    const lines: string[] = [];
    // Powertools writes ERROR and WARN lines to stderr, the others to stdout: Lambda keeps both.
    const capture = (chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation(capture),
      vi.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
    const level = logger.getLevelName();
    logger.setLogLevel('DEBUG');
    try {
      const failingQueue = {
        enqueue: async () => Promise.reject(new Error('boom', { cause: new Error('queue down') })),
      };
      const send = (await import('../../functions/handlers/send-email.js')).makeHandler({ ...deps, log });
      const failing = (await import('../../functions/handlers/send-email.js')).makeHandler({
        ...deps,
        log,
        queue: failingQueue,
      });
      const list = (await import('../../functions/handlers/list-emails.js')).makeHandler({ ...deps, log });
      const brokenCounter = (await import('../../functions/handlers/send-email.js')).makeHandler({
        ...deps,
        log,
        apiKeys: Object.assign(Object.create(repos.apiKeys), {
          authenticate: async () => Promise.reject(new Error('throttled')),
        }),
      });
      const brokenKeys = (await import('../../functions/handlers/send-email.js')).makeHandler({
        ...deps,
        log,
        apiKeys: { findByHash: async () => Promise.reject(new Error('table unreachable')) },
      });
      const post = (t: string) => httpEvent({ method: 'POST', path: '/v1/emails', token: t, body: email });
      // Stored, not queued (the sweeper will): 200, and the queue's error logged.
      expect((await failing(post(token), context())).statusCode).toBe(200);
      expect((await brokenCounter(post(token), context())).statusCode).toBe(500);
      expect((await brokenKeys(post(token), context())).statusCode).toBe(500);
      const get = (t: string) => httpEvent({ method: 'GET', path: '/v1/emails', token: t });
      expect((await list(get(token), context())).statusCode).toBe(403);
      expect((await list(get(`esk_${'z'.repeat(43)}`), context())).statusCode).toBe(401);
      for (let i = 0; i < 12; i++) await send(post(token), context()); // 200s, then 429s
    } finally {
      for (const spy of spies) spy.mockRestore();
      logger.setLogLevel(level);
    }
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    // It did log (the failure with its stack and cause, the key item's), each line with its request id.
    expect(records.map((r) => r.message)).toEqual(
      expect.arrayContaining(['could not queue a stored email; the sweeper will', 'unhandled error']),
    );
    const failure = records.find((r) => r.message === 'could not queue a stored email; the sweeper will') as {
      error: Record<string, unknown>;
      email_id: string;
    };
    expect(failure.email_id).toMatch(/^em_/);
    expect(failure.error).toMatchObject({
      name: 'Error',
      message: 'boom',
      stack: expect.stringContaining('Error: boom'),
    });
    expect(JSON.stringify(failure.error)).toContain('queue down');
    for (const record of records) expect(record.function_request_id).toEqual(expect.any(String));
    const text = lines.join('\n');
    expect(text).not.toContain(token);
    expect(text).not.toContain(key.hash);
    expect(text).not.toMatch(/authorization|bearer|esk_/i);
  });
});
