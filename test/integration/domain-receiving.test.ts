/**
 * A domain's receiving (Resend's `capabilities.receiving`): handlers invoked with API Gateway
 * events, the table on dynalite (the domain and name items, the receipt-rule writer's
 * `RECEIVING`/`RULES` item), SES answering with the SDK's documented shapes, DNS a map of MX
 * records, and the receipt-rule writer's queue a recorder of the requests made to it.
 */
import {
  CreateEmailIdentityCommand,
  type CreateEmailIdentityCommandOutput,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import {
  DynamoReceiptRuleSetStates,
  RULE_SET_STATE_KEY,
} from '../../functions/adapters/dynamodb/receipt-rule-set-state.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { OWNER_TAG, SesIdentities } from '../../functions/adapters/ses/identities.js';
import { type DomainDeps, RULES_RESYNC_MS, VERIFIED_RECHECK_MS } from '../../functions/domains/domains.js';
import type { DnsLookup } from '../../functions/domains/ports.js';
import { RECEIVING_REGIONS } from '../../functions/domains/receiving-regions.js';
import { makeHandler as makeCheck } from '../../functions/handlers/check-domains.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-domain.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-domain.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-domain.js';
import { makeHandler as makeList } from '../../functions/handlers/list-domains.js';
import { makeHandler as makeUpdate } from '../../functions/handlers/update-domain.js';
import type { Clock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

const ses = mockClient(SESv2Client);
const meta = { $metadata: {} };
const OWNER = 'test-table';
const TOKENS = ['4q4ctwbmvgx7mszy5thz6yw3vkmz3p2x'];
const INBOUND = 'inbound-smtp.eu-west-1.amazonaws.com';

const created = (): CreateEmailIdentityCommandOutput => ({
  ...meta,
  IdentityType: 'DOMAIN',
  VerifiedForSendingStatus: true,
  DkimAttributes: { SigningEnabled: true, Status: 'SUCCESS', Tokens: TOKENS },
});
const identity = (domain: string) => ({
  ...meta,
  IdentityType: 'DOMAIN' as const,
  VerifiedForSendingStatus: true,
  VerificationStatus: 'SUCCESS' as const,
  DkimAttributes: { SigningEnabled: true, Status: 'SUCCESS' as const, Tokens: TOKENS },
  MailFromAttributes: {
    MailFromDomain: `send.${domain}`,
    MailFromDomainStatus: 'SUCCESS' as const,
    BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' as const,
  },
  Tags: [{ Key: OWNER_TAG, Value: OWNER }],
});

/** DNS as a map of MX records by name, or failing. */
const mx = new Map<string, { exchange: string; priority: number }[]>();
let dnsFailing = false;
const dns: DnsLookup = {
  mx: async (name) => {
    if (dnsFailing) throw Object.assign(new Error('queryMx ESERVFAIL'), { code: 'ESERVFAIL' });
    return mx.get(name) ?? [];
  },
  cname: async () => [],
  caaIssuers: async () => [],
};
/** The receipt-rule writer's queue: the requests made to it (or a failure to queue). */
const requests: string[] = [];
let queueFailing = false;
const sync = {
  request: async (reason: string) => {
    if (queueFailing) throw new Error('SQS unavailable');
    requests.push(reason);
  },
};
const errors: string[] = [];
const log = {
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => errors.push(message),
};

let table: TestTable;
let token: string;
let domains: DynamoDomainRepository;
let deps: Parameters<typeof makeCreate>[0];
let now = new Date('2026-11-22T10:00:00.000Z');
const clock: Clock = { now: () => now };

beforeAll(async () => {
  table = await startTestTable();
  const apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  domains = new DynamoDomainRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  deps = {
    apiKeys,
    domains,
    identities: new SesIdentities(
      new SESv2Client({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
      { region: 'eu-west-1', owner: OWNER },
    ),
    receiving: { sync, ruleSets: new DynamoReceiptRuleSetStates(table.db, table.tableName), dns },
    clock,
    log,
    region: 'eu-west-1',
  };
});
afterAll(() => table.stop());
beforeEach(async () => {
  ses.reset();
  ses.on(PutEmailIdentityMailFromAttributesCommand).resolves(meta);
  ses.on(DeleteEmailIdentityCommand).resolves(meta);
  mx.clear();
  dnsFailing = false;
  queueFailing = false;
  requests.length = 0;
  errors.length = 0;
  now = new Date('2026-11-22T10:00:00.000Z');
  await table.db.send(new DeleteCommand({ TableName: table.tableName, Key: RULE_SET_STATE_KEY }));
});

type Response = APIGatewayProxyStructuredResultV2;
let names = 0;
const fresh = () => `receiving${++names}.test`;

const create = async (body: Record<string, unknown>, d = deps) => {
  const name = String(body.name ?? body.domain);
  ses.on(CreateEmailIdentityCommand, { EmailIdentity: name }).resolves(created());
  ses.on(GetEmailIdentityCommand, { EmailIdentity: name }).resolves(identity(name));
  return (await makeCreate(d)(
    httpEvent({ method: 'POST', path: '/v1/domains', token, body }),
    context(),
  )) as Response;
};
const withId = (method: string, id: string, body?: unknown) =>
  httpEvent({
    method,
    path: `/v1/domains/${id}`,
    routeKey: `${method} /v1/domains/{id}`,
    token,
    pathParameters: { id },
    ...(body === undefined ? {} : { body }),
  });
const patch = (id: string, body: unknown, d = deps) =>
  makeUpdate(d)(withId('PATCH', id, body), context()) as Promise<Response>;
const get = async (id: string) => {
  const response = (await makeGet(deps)(withId('GET', id), context())) as Response;
  expect(response.statusCode).toBe(200);
  return parseBody(response);
};
const remove = (id: string) => makeDelete(deps)(withId('DELETE', id), context()) as Promise<Response>;
const receivingRecordOf = (body: { records: { record: string; status?: string }[] }) =>
  body.records.find((r) => r.record === 'Receiving');
const nameItem = async (name: string) =>
  (
    await table.db.send(
      new GetCommand({
        TableName: table.tableName,
        Key: { pk: keys.domainName(name), sk: keys.domainNameSk },
      }),
    )
  ).Item;
const writerSaw = (state: { active_set: string | null; ours: boolean }) =>
  table.db.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        ...RULE_SET_STATE_KEY,
        ...state,
        checked_at: now.toISOString(),
        rule_set: 'EmailService-receiving',
      },
    }),
  );

async function receivingDomain() {
  const name = fresh();
  const response = await create({ name, capabilities: { receiving: 'enabled' } });
  expect(response.statusCode).toBe(201);
  return parseBody(response) as { id: string; name: string; records: { record: string }[] };
}

describe('capabilities.receiving on POST /v1/domains', () => {
  it('enabled: the Receiving MX record, the capability, stored on both items, and the writer asked to follow', async () => {
    const name = fresh();
    const response = await create({ name, capabilities: { sending: 'enabled', receiving: 'enabled' } });
    expect(response.statusCode).toBe(201);
    const body = parseBody(response);
    expect(body.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(receivingRecordOf(body)).toEqual({
      record: 'Receiving',
      type: 'MX',
      name,
      value: INBOUND,
      priority: 10,
      ttl: 'Auto',
      status: 'pending',
    });
    expectResendShape(body, 'CreateDomainResponse');
    expect(requests).toHaveLength(1);
    expect((await domains.get(body.id))?.receiving).toBe(true);
    // The name item too, as the send path and the SMTP twin read it.
    expect((await nameItem(name))?.receiving).toBe(true);
    // Listed as stored.
    const listed = parseBody(
      (await makeList(deps)(httpEvent({ method: 'GET', path: '/v1/domains', token }), context())) as Response,
    );
    const item = listed.data.find((d: { id: string }) => d.id === body.id);
    expect(item.capabilities.receiving).toBe('enabled');
    expect(receivingRecordOf(item)).toMatchObject({ type: 'MX', value: INBOUND });
  });

  it('left out (or disabled): no Receiving record, receiving disabled, the writer not asked', async () => {
    for (const body of [{ name: fresh() }, { name: fresh(), capabilities: { receiving: 'disabled' } }]) {
      const response = await create(body);
      expect(response.statusCode).toBe(201);
      const answer = parseBody(response);
      expect(answer.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
      expect(receivingRecordOf(answer)).toBeUndefined();
      expect((await nameItem(body.name))?.receiving).toBe(false);
    }
    expect(requests).toEqual([]);
  });

  it('400 naming the Regions that receive, in a Region SES does not receive in; nothing is created', async () => {
    const elsewhere = { ...deps, region: 'sa-east-1' };
    const name = fresh();
    const response = await create({ name, capabilities: { receiving: 'enabled' } }, elsewhere);
    expect(response.statusCode).toBe(400);
    const body = parseBody(response);
    expect(body.name).toBe('validation_error');
    for (const region of RECEIVING_REGIONS) expect(body.message).toContain(region);
    expect(body.message).toContain('sa-east-1');
    expect(body.errors).toEqual([{ field: 'capabilities.receiving', message: body.message }]);
    expect(ses.commandCalls(CreateEmailIdentityCommand)).toHaveLength(0);
    expect(await nameItem(name)).toBeUndefined();
    // Without receiving, the same Region adds the domain.
    expect((await create({ name }, elsewhere)).statusCode).toBe(201);
    expect(requests).toEqual([]);
  });

  it('400 where the deployment has no receipt-rule queue, in a Region that receives', async () => {
    const noQueue = {
      ...deps,
      receiving: { ruleSets: new DynamoReceiptRuleSetStates(table.db, table.tableName), dns },
    } satisfies DomainDeps;
    const response = await create({ name: fresh(), capabilities: { receiving: 'enabled' } }, noQueue);
    expect(response.statusCode).toBe(400);
    expect(parseBody(response).message).toContain('not set up to receive');
  });
});

describe('PATCH /v1/domains/{id} capabilities.receiving', () => {
  it('turns receiving on and off: the record comes and goes, both items follow, the writer is asked each time', async () => {
    const name = fresh();
    const { id } = parseBody(await create({ name }));
    const on = await patch(id, { capabilities: { receiving: 'enabled' } });
    expect(on.statusCode).toBe(200);
    expect(parseBody(on)).toEqual({ object: 'domain', id });
    expect(requests).toHaveLength(1);
    let body = await get(id);
    expect(body.capabilities.receiving).toBe('enabled');
    expect(receivingRecordOf(body)).toMatchObject({ name, value: INBOUND, priority: 10 });
    expect((await nameItem(name))?.receiving).toBe(true);

    expect((await patch(id, { capabilities: { receiving: 'disabled' } })).statusCode).toBe(200);
    expect(requests).toHaveLength(2);
    body = await get(id);
    expect(body.capabilities.receiving).toBe('disabled');
    expect(receivingRecordOf(body)).toBeUndefined();
    expect(body).not.toHaveProperty('receiving_problem');
    expect((await nameItem(name))?.receiving).toBe(false);
    // Other fields leave receiving as it is, and ask nothing.
    expect((await patch(id, { capabilities: { sending: 'enabled' } })).statusCode).toBe(200);
    expect(requests).toHaveLength(2);
  });

  it('400 in a Region SES does not receive in, naming those that do; the domain is unchanged', async () => {
    const { id } = parseBody(await create({ name: fresh() }));
    const response = await patch(
      id,
      { capabilities: { receiving: 'enabled' } },
      { ...deps, region: 'eu-north-1' },
    );
    expect(response.statusCode).toBe(400);
    expect(parseBody(response).message).toContain(RECEIVING_REGIONS.join(', '));
    expect((await domains.get(id))?.receiving).toBe(false);
    expect(requests).toEqual([]);
  });

  it('a request the queue refuses is logged and the change stands (the scheduled check asks again)', async () => {
    const { id } = parseBody(await create({ name: fresh() }));
    queueFailing = true;
    expect((await patch(id, { capabilities: { receiving: 'enabled' } })).statusCode).toBe(200);
    expect((await domains.get(id))?.receiving).toBe(true);
    expect(errors.some((e) => e.includes('receipt rules'))).toBe(true);
  });
});

describe("the Receiving record's status", () => {
  it('verified when the most preferred MX is the inbound host; pending, saying where mail goes, otherwise', async () => {
    const { id, name } = await receivingDomain();
    const status = async () => {
      const body = await get(id);
      return {
        status: receivingRecordOf(body)?.status,
        problem: body.receiving_problem as string | undefined,
      };
    };
    expect(await status()).toEqual({ status: 'pending', problem: undefined });
    // Ours, spelled as DNS gives it (a trailing dot, any case), with a backup MX after it.
    mx.set(name, [
      { exchange: 'backup.mail.test', priority: 20 },
      { exchange: `${INBOUND.toUpperCase()}.`, priority: 10 },
    ]);
    expect(await status()).toEqual({ status: 'verified', problem: undefined });
    expectResendShape(await get(id), 'Domain');
    // Another host preferred: mail goes there.
    mx.set(name, [
      { exchange: INBOUND, priority: 10 },
      { exchange: 'mx.elsewhere.test', priority: 5 },
    ]);
    const elsewhere = await status();
    expect(elsewhere.status).toBe('pending');
    expect(elsewhere.problem).toContain('mx.elsewhere.test');
    expect(elsewhere.problem).toContain('subdomain');
    // Another host as preferred as ours: senders pick either.
    mx.set(name, [
      { exchange: INBOUND, priority: 10 },
      { exchange: 'mx.elsewhere.test', priority: 10 },
    ]);
    expect((await status()).status).toBe('pending');
    dnsFailing = true;
    expect((await status()).status).toBe('temporary_failure');
  });

  it("failed, with receiving_problem, while the account's active rule set does not hold our rules", async () => {
    const { id, name } = await receivingDomain();
    mx.set(name, [{ exchange: INBOUND, priority: 10 }]);
    await writerSaw({ active_set: 'someone-elses', ours: false });
    let body = await get(id);
    expect(receivingRecordOf(body)?.status).toBe('failed');
    expect(body.receiving_problem).toContain('"someone-elses"');
    expect(body.receiving_problem).toContain('"EmailService-receiving"');
    expectResendShape(body, 'Domain');
    await writerSaw({ active_set: null, ours: false });
    expect((await get(id)).receiving_problem).toContain('No receipt rule set is active');
    await writerSaw({ active_set: 'EmailService-receiving', ours: true });
    body = await get(id);
    expect(receivingRecordOf(body)?.status).toBe('verified');
    expect(body).not.toHaveProperty('receiving_problem');
  });
});

describe('the writer asked to follow', () => {
  it('on delete of a receiving domain, not of another', async () => {
    const receiving = await receivingDomain();
    const other = parseBody(await create({ name: fresh() }));
    requests.length = 0;
    expect((await remove(other.id)).statusCode).toBe(200);
    expect(requests).toEqual([]);
    expect((await remove(receiving.id)).statusCode).toBe(200);
    expect(requests).toHaveLength(1);
  });

  it("by the scheduled check while any domain receives and the writer's last look is old; it also marks a rule set gone astray", async () => {
    const check = makeCheck(deps);
    const { id, name } = await receivingDomain();
    mx.set(name, [{ exchange: INBOUND, priority: 10 }]);
    await get(id);
    requests.length = 0;
    // The writer never looked: each run asks.
    await check();
    expect(requests).toHaveLength(1);
    await check();
    expect(requests).toHaveLength(2);
    // It looked just now: nothing to ask until its look is RULES_RESYNC_MS old.
    await writerSaw({ active_set: 'EmailService-receiving', ours: true });
    await check();
    expect(requests).toHaveLength(2);
    now = new Date(now.getTime() + RULES_RESYNC_MS);
    await check();
    expect(requests).toHaveLength(3);
    // Verified and looked at a minute ago, yet the rule set changed: looked at now, not in an hour.
    await writerSaw({ active_set: 'someone-elses', ours: false });
    requests.length = 0;
    await check();
    expect(requests).toEqual([]);
    const stored = await domains.get(id);
    expect(stored?.records.find((r) => r.record === 'Receiving')?.status).toBe('failed');
    expect(stored?.receiving_problem).toContain('someone-elses');
    expect(now.getTime() - Date.parse(stored?.checked_at ?? '')).toBeLessThan(VERIFIED_RECHECK_MS);
    // With no receiving domain left, the check asks nothing.
    for await (const domain of domains.all()) if (domain.receiving) await domains.delete(domain);
    requests.length = 0;
    await check();
    expect(requests).toEqual([]);
  });
});
