import {
  AlreadyExistsException,
  CreateEmailIdentityCommand,
  type CreateEmailIdentityCommandOutput,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  type GetEmailIdentityCommandOutput,
  LimitExceededException,
  NotFoundException,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { OWNER_TAG, SesIdentities, toDomainStatus } from '../../functions/adapters/ses/identities.js';
import {
  MAX_CHECKS_PER_RUN,
  VERIFIED_RECHECK_MS,
  verifiedSenderDomains,
} from '../../functions/domains/domains.js';
import { domainEvent } from '../../functions/domains/events.js';
import type { Domain } from '../../functions/domains/model.js';
import type { DomainRepository } from '../../functions/domains/ports.js';
import { makeHandler as makeCheck } from '../../functions/handlers/check-domains.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-domain.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-domain.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-domain.js';
import { makeHandler as makeList } from '../../functions/handlers/list-domains.js';
import { makeHandler as makeVerify } from '../../functions/handlers/verify-domain.js';
import type { Clock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey, storeDomain } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

const ses = mockClient(SESv2Client);
const TOKENS = [
  '4q4ctwbmvgx7mszy5thz6yw3vkmz3p2x',
  'lq2lzlwjjyp4ypvcfzgpqtlxiiv7l6ws',
  'z7l6xhbxmc7kaj3qt7zuvpbbkemq2i5b',
];
const OWNER = 'test-table';
const meta = { $metadata: {} };

/** CreateEmailIdentity's documented response for a new domain with Easy DKIM. */
const created = (): CreateEmailIdentityCommandOutput => ({
  ...meta,
  IdentityType: 'DOMAIN',
  VerifiedForSendingStatus: false,
  DkimAttributes: {
    SigningEnabled: true,
    Status: 'NOT_STARTED',
    Tokens: TOKENS,
    SigningAttributesOrigin: 'AWS_SES',
    NextSigningKeyLength: 'RSA_2048_BIT',
    CurrentSigningKeyLength: 'RSA_2048_BIT',
  },
});

/** GetEmailIdentity's documented response. */
const identity = (
  domain: string,
  status: 'PENDING' | 'SUCCESS' | 'FAILED' | 'TEMPORARY_FAILURE' | 'NOT_STARTED',
  mailFromStatus: 'PENDING' | 'SUCCESS' | 'FAILED' | 'TEMPORARY_FAILURE' = 'PENDING',
  tags = [{ Key: OWNER_TAG, Value: OWNER }],
): GetEmailIdentityCommandOutput => ({
  ...meta,
  IdentityType: 'DOMAIN',
  FeedbackForwardingStatus: true,
  VerifiedForSendingStatus: status === 'SUCCESS',
  VerificationStatus: status,
  DkimAttributes: { ...created().DkimAttributes, Status: status },
  MailFromAttributes: {
    MailFromDomain: `send.${domain}`,
    MailFromDomainStatus: mailFromStatus,
    BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
  },
  Policies: {},
  Tags: tags,
});

const sesError = <T>(Type: new (o: { message: string; $metadata: object }) => T, message = 'refused') =>
  new Type({ message, $metadata: {} });

let table: TestTable;
let token: string;
let deps: Parameters<typeof makeCreate>[0];
let domains: DynamoDomainRepository;
let now = new Date('2026-11-22T10:00:00.000Z');
const clock: Clock = { now: () => now };
const silentLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  const apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  domains = new DynamoDomainRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  const identities = new SesIdentities(
    new SESv2Client({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
    { region: 'eu-west-1', owner: OWNER },
  );
  deps = { apiKeys, domains, identities, clock, log: silentLog, region: 'eu-west-1' };
});
afterAll(() => table.stop());
beforeEach(() => {
  ses.reset();
  now = new Date('2026-11-22T10:00:00.000Z');
});

type Response = APIGatewayProxyStructuredResultV2;
const create = (body: unknown, d = deps) =>
  makeCreate(d)(
    httpEvent({ method: 'POST', path: '/v1/domains', token, body }),
    context(),
  ) as Promise<Response>;
const withId = (method: string, path: string, id: string) =>
  httpEvent({
    method,
    path: path.replace('{id}', id),
    routeKey: `${method} ${path}`,
    token,
    pathParameters: { id },
  });
const get = (id: string) =>
  makeGet(deps)(withId('GET', '/v1/domains/{id}', id), context()) as Promise<Response>;
const verify = (id: string) =>
  makeVerify(deps)(withId('POST', '/v1/domains/{id}/verify', id), context()) as Promise<Response>;
const remove = (id: string) =>
  makeDelete(deps)(withId('DELETE', '/v1/domains/{id}', id), context()) as Promise<Response>;
const list = (query?: Record<string, string>) =>
  makeList(deps)(
    httpEvent({ method: 'GET', path: '/v1/domains', token, query }),
    context(),
  ) as Promise<Response>;

function expectError(response: Response, statusCode: number, name: string) {
  expect(response.statusCode).toBe(statusCode);
  const body = parseBody(response);
  expect(body).toMatchObject({ statusCode, name, message: expect.any(String) });
  return body;
}

/** Adds a domain with SES answering as documented; returns the API's body. */
async function add(domain: string) {
  ses.on(CreateEmailIdentityCommand, { EmailIdentity: domain }).resolves(created());
  ses.on(PutEmailIdentityMailFromAttributesCommand).resolves(meta);
  const response = await create({ domain });
  expect(response.statusCode).toBe(201);
  return parseBody(response);
}

describe('POST /v1/domains', () => {
  it('201: creates the SES identity (Easy DKIM, MAIL FROM subdomain, owner tag) and returns every record to publish', async () => {
    const body = await add('acme.com');
    expect(body).toMatchObject({
      object: 'domain',
      id: expect.stringMatching(/^dom_[0-9a-z]{26}$/),
      domain: 'acme.com',
      name: 'acme.com',
      status: 'pending',
      created_at: now.toISOString(),
      region: 'eu-west-1',
      open_tracking: false,
      click_tracking: false,
      capabilities: { sending: 'enabled', receiving: 'disabled' },
      mail_from_domain: 'send.acme.com',
      // Suggested, and not one of Resend's record kinds: a field of our own, not in `records`.
      dmarc_record: {
        type: 'TXT',
        name: '_dmarc.acme.com',
        value: 'v=DMARC1; p=none;',
        ttl: 'Auto',
        status: 'not_checked',
      },
    });
    expect(body).not.toHaveProperty('tracking_subdomain');
    expect(body.records).toEqual([
      ...TOKENS.map((t) => ({
        record: 'DKIM',
        type: 'CNAME',
        name: `${t}._domainkey.acme.com`,
        value: `${t}.dkim.amazonses.com`,
        ttl: 'Auto',
        status: 'pending',
      })),
      {
        record: 'SPF',
        type: 'MX',
        name: 'send.acme.com',
        value: 'feedback-smtp.eu-west-1.amazonses.com',
        priority: 10,
        ttl: 'Auto',
        status: 'pending',
      },
      {
        record: 'SPF',
        type: 'TXT',
        name: 'send.acme.com',
        value: 'v=spf1 include:amazonses.com ~all',
        ttl: 'Auto',
        status: 'pending',
      },
    ]);
    expect(ses.commandCalls(CreateEmailIdentityCommand)[0]?.args[0].input).toEqual({
      EmailIdentity: 'acme.com',
      Tags: [{ Key: OWNER_TAG, Value: OWNER }],
      DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
    });
    expect(ses.commandCalls(PutEmailIdentityMailFromAttributesCommand)[0]?.args[0].input).toEqual({
      EmailIdentity: 'acme.com',
      MailFromDomain: 'send.acme.com',
      BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
    });
  });

  it("accepts Resend's {name}, normalises case, and stores an internationalised name as punycode", async () => {
    const upper = await add('upper.example');
    expect(upper.domain).toBe('upper.example');
    ses.on(CreateEmailIdentityCommand).resolves(created());
    const idn = parseBody(await create({ name: 'Bücher.Example' }));
    expect(idn.domain).toBe('xn--bcher-kva.example');
    expect(ses.commandCalls(CreateEmailIdentityCommand).at(-1)?.args[0].input.EmailIdentity).toBe(
      'xn--bcher-kva.example',
    );
  });

  it('400 naming the problem for a name that is not a host name; SES is not called', async () => {
    for (const domain of [
      'https://acme.com',
      'acme .com',
      '10.0.0.1',
      'acme',
      'a..b',
      `${'x'.repeat(64)}.com`,
    ]) {
      const body = expectError(await create({ domain }), 400, 'validation_error');
      expect(body.errors?.[0]?.field).toBe('domain');
    }
    expectError(await create({}), 400, 'validation_error');
    expect(ses.calls()).toHaveLength(0);
  });

  it('409 with the existing id when the domain exists; SES is not called again', async () => {
    const first = await add('twice.example');
    ses.reset();
    const body = expectError(await create({ domain: 'TWICE.example.' }), 409, 'already_exists');
    expect(body.message).toContain(first.id);
    expect(ses.calls()).toHaveLength(0);
  });

  it('two concurrent requests for one name: one domain, the other 409', async () => {
    ses.on(CreateEmailIdentityCommand).resolves(created());
    const responses = await Promise.all([
      create({ domain: 'race.example' }),
      create({ domain: 'race.example' }),
    ]);
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(ses.commandCalls(CreateEmailIdentityCommand)).toHaveLength(1);
  });

  it('SES refusals: a clear error in the standard shape, and no record left behind', async () => {
    const cases: [Error, number, string][] = [
      [sesError(AlreadyExistsException), 409, 'already_exists'],
      [sesError(LimitExceededException, 'Maximum number of identities exceeded'), 400, 'validation_error'],
      [sesError(TooManyRequestsException), 429, 'rate_limit_exceeded'],
      [new Error('socket hang up'), 500, 'internal_server_error'],
    ];
    for (const [error, status, name] of cases) {
      ses.reset();
      ses.on(CreateEmailIdentityCommand).rejects(error);
      // Another account's identity (no owner tag of ours): refuse rather than take it over.
      ses.on(GetEmailIdentityCommand).resolves(identity('refused.example', 'SUCCESS', 'SUCCESS', []));
      const response = await create({ domain: 'refused.example' });
      const body = expectError(response, status, name);
      if (status === 409) expect(body.message).toContain('did not create');
      if (status === 429) expect(response.headers?.['retry-after']).toBe('1');
      if (status === 400) expect(body.message).toContain('Maximum number of identities');
    }
    const listed = parseBody(await list());
    expect(listed.data.map((d: Domain) => d.domain)).not.toContain('refused.example');
    // The name was given back: the same request succeeds once SES accepts it.
    ses.reset();
    await add('refused.example');
  });

  it('if storing fails after SES created the identity, a retry of the same request adopts it and succeeds', async () => {
    let failOnce = true;
    const flaky: DomainRepository = Object.create(domains);
    flaky.save = async (domain, mode) => {
      if (failOnce) {
        failOnce = false;
        throw new Error('ProvisionedThroughputExceededException');
      }
      return domains.save(domain, mode);
    };
    ses.on(CreateEmailIdentityCommand).resolvesOnce(created()).rejects(sesError(AlreadyExistsException));
    ses.on(GetEmailIdentityCommand).resolves(identity('retry.example', 'PENDING'));
    expectError(
      await create({ domain: 'retry.example' }, { ...deps, domains: flaky }),
      500,
      'internal_server_error',
    );
    const retried = await create({ domain: 'retry.example' }, { ...deps, domains: flaky });
    expect(retried.statusCode).toBe(201);
    expect(parseBody(retried).records).toHaveLength(5);
    const listed = parseBody(await list({ limit: '100' }));
    expect(listed.data.filter((d: Domain) => d.domain === 'retry.example')).toHaveLength(1);
  });
});

describe('GET /v1/domains/{id} and POST /v1/domains/{id}/verify', () => {
  it('map every SES status, per record, and store the change', async () => {
    const { id } = await add('status.example');
    const cases = [
      ['NOT_STARTED', 'PENDING', 'pending', 'pending'],
      ['PENDING', 'PENDING', 'pending', 'pending'],
      ['TEMPORARY_FAILURE', 'TEMPORARY_FAILURE', 'temporary_failure', 'temporary_failure'],
      ['SUCCESS', 'PENDING', 'verified', 'pending'],
      ['SUCCESS', 'FAILED', 'verified', 'failed'],
      ['SUCCESS', 'SUCCESS', 'verified', 'verified'],
      ['FAILED', 'FAILED', 'failed', 'failed'],
    ] as const;
    for (const [dkim, mailFrom, status, mailFromStatus] of cases) {
      ses.on(GetEmailIdentityCommand).resolves(identity('status.example', dkim, mailFrom));
      const body = parseBody(await get(id));
      // Resend has no temporary_failure for a domain: SES keeps looking, so it is still pending.
      const domainStatus = status === 'temporary_failure' ? 'pending' : status;
      expect(body.status).toBe(domainStatus);
      expect(
        body.records
          .filter((r: { record: string }) => r.record === 'DKIM')
          .map((r: { status: string }) => r.status),
      ).toEqual([status, status, status]);
      expect(
        body.records
          .filter((r: { record: string }) => r.record === 'SPF')
          .map((r: { status: string }) => r.status),
      ).toEqual([mailFromStatus, mailFromStatus]);
      // Stored: the listing (which reads no SES) shows it too.
      const listed = parseBody(await list()).data.find((d: Domain) => d.id === id);
      expect(listed.status).toBe(domainStatus);
    }
  });

  it('verify reads SES now and returns the domain; a verified domain can send', async () => {
    const { id } = await add('verify.example');
    const guard = verifiedSenderDomains(domains, clock);
    await expect(guard('verify.example')).rejects.toThrow('not verified (status: pending)');
    ses.on(GetEmailIdentityCommand).resolves(identity('verify.example', 'SUCCESS', 'SUCCESS'));
    const response = await verify(id);
    expect(response.statusCode).toBe(200);
    expect(parseBody(response)).toMatchObject({ object: 'domain', id, status: 'verified' });
    await expect(guard('verify.example')).resolves.toBeUndefined();
  });

  it('an identity deleted in SES behind our back makes the domain failed', async () => {
    const { id } = await add('gone.example');
    ses.on(GetEmailIdentityCommand).rejects(sesError(NotFoundException));
    expect(parseBody(await get(id)).status).toBe('failed');
  });

  it('when SES cannot be read, returns the stored domain rather than an error', async () => {
    const { id } = await add('flaky.example');
    ses.on(GetEmailIdentityCommand).rejects(sesError(TooManyRequestsException));
    const response = await get(id);
    expect(response.statusCode).toBe(200);
    expect(parseBody(response).status).toBe('pending');
  });

  it('404 for an unknown or malformed id', async () => {
    expectError(await get('dom_01m80mv90eew9ryfvqd1ksnhes'), 404, 'not_found');
    expectError(await get('em_01m80mv90eew9ryfvqd1ksnhes'), 404, 'not_found');
    expectError(await verify('nope'), 404, 'not_found');
    expectError(await remove('dom_01m80mv90eew9ryfvqd1ksnhes'), 404, 'not_found');
  });
});

describe('GET /v1/domains', () => {
  it('lists newest first with has_more and limit/offset, and refuses bad parameters', async () => {
    const a = await add('list-a.example');
    const b = await add('list-b.example');
    const page = parseBody(await list({ limit: '2' }));
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(page.data.map((d: Domain) => d.id)).toEqual([b.id, a.id]);
    expect(page.data[0]).toMatchObject({
      object: 'domain',
      domain: 'list-b.example',
      records: expect.any(Array),
    });
    expect(parseBody(await list({ limit: '1', offset: '1' })).data[0].id).toBe(a.id);
    expectError(await list({ limit: '0' }), 400, 'validation_error');
    expectError(await list({ status: 'verified' }), 400, 'validation_error');
  });
});

describe('DELETE /v1/domains/{id}', () => {
  it('deletes the SES identity, then the domain; sending from it stops and the name can be added again', async () => {
    const { id } = await add('delete.example');
    ses.on(GetEmailIdentityCommand).resolves(identity('delete.example', 'SUCCESS', 'SUCCESS'));
    await verify(id);
    ses.on(DeleteEmailIdentityCommand).resolves(meta);
    const response = await remove(id);
    expect(response.statusCode).toBe(200);
    expect(parseBody(response)).toEqual({ object: 'domain', id, deleted: true });
    expect(ses.commandCalls(DeleteEmailIdentityCommand)[0]?.args[0].input).toEqual({
      EmailIdentity: 'delete.example',
    });
    expectError(await get(id), 404, 'not_found');
    await expect(verifiedSenderDomains(domains, clock)('delete.example')).rejects.toThrow(
      'not a domain of this service',
    );
    await add('delete.example');
  });

  it('an identity already gone from SES is fine; SES throttling keeps the domain for a retry', async () => {
    const { id } = await add('delete2.example');
    ses
      .on(DeleteEmailIdentityCommand)
      .rejectsOnce(sesError(TooManyRequestsException))
      .rejects(sesError(NotFoundException));
    expectError(await remove(id), 429, 'rate_limit_exceeded');
    expect((await get(id)).statusCode).toBe(200);
    expect((await remove(id)).statusCode).toBe(200);
    expectError(await get(id), 404, 'not_found');
  });
});

describe('scheduled check (check-domains)', () => {
  it('re-reads domains with records still pending every run, verified ones once an hour; failed ones are left alone', async () => {
    const fresh = await startTestTable('check-table');
    try {
      const repo = new DynamoDomainRepository(fresh.db, fresh.tableName);
      const check = makeCheck({ ...deps, domains: repo });
      const apiKeys = new DynamoApiKeyRepository(fresh.db, fresh.tableName);
      const freshToken = await fullAccessKey(apiKeys);
      const create2 = (domain: string) =>
        makeCreate({ ...deps, apiKeys, domains: repo })(
          httpEvent({ method: 'POST', path: '/v1/domains', token: freshToken, body: { domain } }),
          context(),
        );
      ses.on(CreateEmailIdentityCommand).resolves(created());
      for (const d of ['p.example', 'v.example', 'f.example']) await create2(d);
      ses
        .on(GetEmailIdentityCommand, { EmailIdentity: 'p.example' })
        .resolves(identity('p.example', 'PENDING'));
      ses
        .on(GetEmailIdentityCommand, { EmailIdentity: 'v.example' })
        .resolves(identity('v.example', 'SUCCESS'));
      ses
        .on(GetEmailIdentityCommand, { EmailIdentity: 'f.example' })
        .resolves(identity('f.example', 'FAILED'));
      expect(await check()).toEqual({ checked: 3, changed: 2 });

      // v is verified by DKIM, but its MAIL FROM records are still pending: it stays on the list.
      const checkedNow = async () => {
        ses.resetHistory();
        now = new Date(now.getTime() + 60_000);
        await check();
        return ses.commandCalls(GetEmailIdentityCommand).map((c) => c.args[0].input.EmailIdentity);
      };
      expect(await checkedNow()).toEqual(['p.example', 'v.example']);
      ses
        .on(GetEmailIdentityCommand, { EmailIdentity: 'v.example' })
        .resolves(identity('v.example', 'SUCCESS', 'SUCCESS'));
      expect(await checkedNow()).toEqual(['p.example', 'v.example']);

      ses.resetHistory();
      now = new Date(now.getTime() + 60_000);
      expect(await check()).toEqual({ checked: 1, changed: 0 });
      expect(ses.commandCalls(GetEmailIdentityCommand).map((c) => c.args[0].input.EmailIdentity)).toEqual([
        'p.example',
      ]);

      now = new Date(now.getTime() + VERIFIED_RECHECK_MS);
      ses.resetHistory();
      expect((await check()).checked).toBe(2);
      expect(
        ses
          .commandCalls(GetEmailIdentityCommand)
          .map((c) => c.args[0].input.EmailIdentity)
          .sort(),
      ).toEqual(['p.example', 'v.example']);
      const statuses: Record<string, string> = {};
      for await (const d of repo.all()) statuses[d.domain] = d.status;
      expect(statuses).toEqual({ 'p.example': 'pending', 'v.example': 'verified', 'f.example': 'failed' });
    } finally {
      await fresh.stop();
    }
  });
});

describe('scheduled check: more due domains than one run checks', () => {
  it('visits the least recently checked first, so 60 pending domains are all checked within two runs', async () => {
    const fresh = await startTestTable('check-order');
    try {
      const repo = new DynamoDomainRepository(fresh.db, fresh.tableName);
      const names = Array.from({ length: 60 }, (_, i) => `d${String(i).padStart(2, '0')}.example`);
      for (const name of names) await storeDomain(repo, name, 'pending');
      ses
        .on(GetEmailIdentityCommand)
        .callsFake((input: { EmailIdentity: string }) => identity(input.EmailIdentity, 'PENDING'));
      now = new Date(Date.now() + 60_000);
      const check = makeCheck({ ...deps, domains: repo });
      const run = async () => {
        ses.resetHistory();
        now = new Date(now.getTime() + 60_000);
        expect((await check()).checked).toBe(MAX_CHECKS_PER_RUN);
        return ses.commandCalls(GetEmailIdentityCommand).map((c) => String(c.args[0].input.EmailIdentity));
      };
      const first = await run();
      const second = await run();
      // The ten the first run could not reach come first in the second.
      expect(second.slice(0, 10).sort()).toEqual(names.filter((n) => !first.includes(n)).sort());
      expect(new Set([...first, ...second]).size).toBe(60);
    } finally {
      await fresh.stop();
    }
  });
});

describe('SES statuses in the API', () => {
  it('maps each SES verification status', () => {
    expect(toDomainStatus('SUCCESS')).toBe('verified');
    expect(toDomainStatus('PENDING')).toBe('pending');
    expect(toDomainStatus('NOT_STARTED')).toBe('pending');
    expect(toDomainStatus('FAILED')).toBe('failed');
    expect(toDomainStatus('TEMPORARY_FAILURE')).toBe('temporary_failure');
    expect(toDomainStatus(undefined)).toBe('pending');
  });
});

describe("Resend's document", () => {
  it(`every domain answer and domain event fits its schema, whatever SES says`, async () => {
    const created = await add('shape.example');
    expectResendShape(created, 'CreateDomainResponse');
    for (const [dkim, mailFrom] of [
      ['NOT_STARTED', 'PENDING'],
      ['TEMPORARY_FAILURE', 'TEMPORARY_FAILURE'],
      ['SUCCESS', 'FAILED'],
      ['FAILED', 'FAILED'],
    ] as const) {
      ses.on(GetEmailIdentityCommand).resolves(identity('shape.example', dkim, mailFrom));
      const got = parseBody(await get(created.id));
      expectResendShape(got, 'Domain');
      const verified = parseBody(await verify(created.id));
      expectResendShape(verified, 'VerifyDomainResponse');
      expectResendShape(verified, 'Domain');
      const listed = parseBody(await list({ limit: '100' }));
      expectResendShape(listed, 'ListDomainsResponse');
      for (const item of listed.data) expectResendShape(item, 'Domain');
      const stored = await domains.get(created.id);
      if (!stored) throw new Error('the domain is stored');
      for (const type of ['domain.created', 'domain.updated', 'domain.deleted'] as const) {
        const { key: _, ...payload } = domainEvent(type, now.toISOString(), stored, 'eu-west-1');
        expectResendShape(
          payload,
          {
            'domain.created': 'DomainCreatedEvent',
            'domain.updated': 'DomainUpdatedEvent',
            'domain.deleted': 'DomainDeletedEvent',
          }[type],
        );
      }
    }
    expectResendShape(parseBody(await remove(created.id)), 'DeleteDomainResponse');
  });

  it('a domain stored with the DMARC record among its records (before it had a field of its own) shows it only there', async () => {
    const stored = await storeDomain(domains, 'legacy.example', 'verified');
    const legacy = {
      record: 'DMARC',
      type: 'TXT',
      name: '_dmarc.legacy.example',
      value: 'v=DMARC1; p=none;',
      ttl: 'Auto',
      status: 'not_checked',
    };
    await domains.save({ ...stored, records: [...stored.records, legacy] } as unknown as Domain, 'existing');
    const listed = parseBody(await list({ limit: '100' })).data.find((d: Domain) => d.id === stored.id);
    expect(listed.records.map((r: { record: string }) => r.record)).toEqual(['SPF']);
    expect(listed.dmarc_record).toMatchObject({ name: '_dmarc.legacy.example', status: 'not_checked' });
  });
});

describe('the send path check', () => {
  it('remembers a verified domain for a minute (no read), never an unverified one', async () => {
    let reads = 0;
    let state: {
      status: 'verified' | 'pending';
      sendable: boolean;
      openTracking: boolean;
      clickTracking: boolean;
    } | null = { status: 'pending', sendable: false, openTracking: false, clickTracking: false };
    const guard = verifiedSenderDomains(
      {
        senderState: async () => {
          reads++;
          return state;
        },
      },
      clock,
    );
    await expect(guard('a.example')).rejects.toThrow('not verified');
    await expect(guard('a.example')).rejects.toThrow('not verified');
    expect(reads).toBe(2);
    state = { status: 'verified', sendable: true, openTracking: false, clickTracking: false };
    await guard('a.example');
    await guard('a.example');
    now = new Date(now.getTime() + 59_000);
    await guard('a.example');
    expect(reads).toBe(3);
    now = new Date(now.getTime() + 2_000);
    state = null;
    await expect(guard('a.example')).rejects.toThrow('not a domain of this service');
    expect(reads).toBe(4);
  });
});
