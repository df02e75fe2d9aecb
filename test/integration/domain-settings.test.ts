/**
 * A domain's settings (Resend's PATCH /domains/{id} and the same fields on create): handlers
 * invoked with API Gateway events, the table on dynalite, SES answering with the SDK's documented
 * shapes (aws-sdk-client-mock, as the template cannot show calls made at run time), DNS a map.
 */
import {
  AlreadyExistsException,
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  CreateEmailIdentityCommand,
  type CreateEmailIdentityCommandOutput,
  DeleteConfigurationSetCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  NotFoundException,
  PutConfigurationSetDeliveryOptionsCommand,
  PutConfigurationSetTrackingOptionsCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
  TooManyRequestsException,
  UpdateConfigurationSetEventDestinationCommand,
} from '@aws-sdk/client-sesv2';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import {
  EVENT_DESTINATION_NAME,
  PUBLISHED_EVENT_TYPES,
  SesConfigurationSets,
} from '../../functions/adapters/ses/configuration-sets.js';
import { OWNER_TAG, SesIdentities } from '../../functions/adapters/ses/identities.js';
import {
  checkDomains,
  type DomainDeps,
  RETIRED_SET_KEEP_MS,
  refreshDomain,
  senderOptions,
  TRACKING_RECHECK_MS,
  VERIFIED_RECHECK_MS,
} from '../../functions/domains/domains.js';
import type { DnsLookup, TrackingFront } from '../../functions/domains/ports.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-domain.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-domain.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-domain.js';
import { makeHandler as makeUpdate } from '../../functions/handlers/update-domain.js';
import type { Clock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

const ses = mockClient(SESv2Client);
const meta = { $metadata: {} };
const OWNER = 'test-table';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:events';
const FRONT = 'd111111abcdef8.cloudfront.net';
const PREFIX = 'EmailService-';
const TOKENS = ['4q4ctwbmvgx7mszy5thz6yw3vkmz3p2x', 'lq2lzlwjjyp4ypvcfzgpqtlxiiv7l6ws'];

const created = (): CreateEmailIdentityCommandOutput => ({
  ...meta,
  IdentityType: 'DOMAIN',
  VerifiedForSendingStatus: true,
  DkimAttributes: { SigningEnabled: true, Status: 'SUCCESS', Tokens: TOKENS },
});
const identity = (domain: string, mailFrom = `send.${domain}`) => ({
  ...meta,
  IdentityType: 'DOMAIN' as const,
  VerifiedForSendingStatus: true,
  VerificationStatus: 'SUCCESS' as const,
  DkimAttributes: { SigningEnabled: true, Status: 'SUCCESS' as const, Tokens: TOKENS },
  MailFromAttributes: {
    MailFromDomain: mailFrom,
    MailFromDomainStatus: 'SUCCESS' as const,
    BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' as const,
  },
  Tags: [{ Key: OWNER_TAG, Value: OWNER }],
});
const sesError = <T>(Type: new (o: { message: string; $metadata: object }) => T, message = 'refused') =>
  new Type({ message, $metadata: {} });

/** DNS as a map: what is published (a name → CNAME targets, CAA issuers), or a failing lookup. */
const published = { cname: new Map<string, string[]>(), caa: new Map<string, string[]>(), failing: false };
const dns: DnsLookup = {
  mx: async () => [],
  cname: async (name) => {
    if (published.failing) throw Object.assign(new Error('queryCname ESERVFAIL'), { code: 'ESERVFAIL' });
    return published.cname.get(name) ?? [];
  },
  caaIssuers: async (name) => published.caa.get(name) ?? [],
};
/** The HTTPS front: serves every host but those given a problem here. */
const unserved = new Map<string, string>();
const front: TrackingFront = { problem: async (host) => unserved.get(host) };

let table: TestTable;
let token: string;
let domains: DynamoDomainRepository;
let deps: Parameters<typeof makeCreate>[0];
const clock: Clock = { now: () => new Date() };
const silentLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
const client = () =>
  new SESv2Client({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const sending = (trackingTarget?: string): NonNullable<DomainDeps['sending']> => ({
  configurationSets: new SesConfigurationSets(client(), {
    eventsTopicArn: TOPIC,
    maxDeliverySeconds: 50_400,
    owner: OWNER,
  }),
  dns,
  front,
  ...(trackingTarget ? { trackingTarget } : {}),
  configurationSetName: (id) => `${PREFIX}${id}`,
});

beforeAll(async () => {
  table = await startTestTable();
  const apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  domains = new DynamoDomainRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  deps = {
    apiKeys,
    domains,
    identities: new SesIdentities(client(), { region: 'eu-west-1', owner: OWNER }),
    sending: sending(FRONT),
    clock,
    log: silentLog,
    region: 'eu-west-1',
  };
});
afterAll(() => table.stop());
beforeEach(() => {
  ses.reset();
  ses.on(PutEmailIdentityMailFromAttributesCommand).resolves(meta);
  ses.on(CreateConfigurationSetCommand).resolves(meta);
  ses.on(CreateConfigurationSetEventDestinationCommand).resolves(meta);
  published.cname.clear();
  published.caa.clear();
  published.failing = false;
  unserved.clear();
});

type Response = APIGatewayProxyStructuredResultV2;
let names = 0;
const fresh = () => `settings${++names}.test`;

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
const add = async (body: Record<string, unknown> = {}) => {
  const response = await create({ name: fresh(), ...body });
  expect(response.statusCode, response.body as string).toBe(201);
  return parseBody(response);
};
const setCalls = () => ses.commandCalls(CreateConfigurationSetCommand).map((c) => c.args[0].input);

describe('PATCH /v1/domains/{id}', () => {
  it("takes Resend's body and answers Resend's {object, id}; the domain shows the settings; tracking alone needs no set of its own", async () => {
    const domain = await add();
    expect(domain).toMatchObject({ open_tracking: false, click_tracking: false, tls: 'opportunistic' });
    const response = await patch(domain.id, { open_tracking: true, click_tracking: true });
    expect(response.statusCode).toBe(200);
    expect(parseBody(response)).toEqual({ object: 'domain', id: domain.id });
    expectResendShape(parseBody(response), 'UpdateDomainResponseSuccess');
    const after = await get(domain.id);
    expect(after).toMatchObject({ open_tracking: true, click_tracking: true, tls: 'opportunistic' });
    expectResendShape(after, 'Domain');
    // Per send (ConfigurationOverrides), so the stack's set: no set of its own.
    expect(setCalls()).toEqual([]);
    expect(await domains.senderState(domain.name)).toMatchObject({ openTracking: true, clickTracking: true });
    expect((await domains.senderState(domain.name))?.configurationSet).toBeUndefined();
    // What is left out stays; an empty body changes nothing.
    expect((await patch(domain.id, { click_tracking: false })).statusCode).toBe(200);
    expect(await get(domain.id)).toMatchObject({ open_tracking: true, click_tracking: false });
    expect((await patch(domain.id, {})).statusCode).toBe(200);
  });

  it("tls enforced: the domain's own configuration set (TLS REQUIRE, the stack's event destination, suppression and delivery time), put before the change is stored", async () => {
    const domain = await add();
    expect((await patch(domain.id, { tls: 'enforced' })).statusCode).toBe(200);
    const name = `${PREFIX}${domain.id}`;
    expect(setCalls()).toEqual([
      {
        ConfigurationSetName: name,
        DeliveryOptions: { TlsPolicy: 'REQUIRE', MaxDeliverySeconds: 50_400 },
        ReputationOptions: { ReputationMetricsEnabled: true },
        SendingOptions: { SendingEnabled: true },
        SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
        Tags: [{ Key: OWNER_TAG, Value: OWNER }],
      },
    ]);
    expect(ses.commandCalls(CreateConfigurationSetEventDestinationCommand)[0]?.args[0].input).toEqual({
      ConfigurationSetName: name,
      EventDestinationName: EVENT_DESTINATION_NAME,
      EventDestination: {
        Enabled: true,
        MatchingEventTypes: [...PUBLISHED_EVENT_TYPES],
        SnsDestination: { TopicArn: TOPIC },
      },
    });
    expect(await get(domain.id)).toMatchObject({ tls: 'enforced' });
    // Sends from the domain use it.
    expect(await domains.senderState(domain.name)).toMatchObject({ configurationSet: name });

    // Back to opportunistic: the same set, updated (sends never switch sets under way).
    ses.on(CreateConfigurationSetCommand).rejects(sesError(AlreadyExistsException));
    ses.on(CreateConfigurationSetEventDestinationCommand).rejects(sesError(AlreadyExistsException));
    ses.on(PutConfigurationSetDeliveryOptionsCommand).resolves(meta);
    ses.on(PutConfigurationSetTrackingOptionsCommand).resolves(meta);
    expect((await patch(domain.id, { tls: 'opportunistic' })).statusCode).toBe(200);
    expect(ses.commandCalls(PutConfigurationSetDeliveryOptionsCommand)[0]?.args[0].input).toEqual({
      ConfigurationSetName: name,
      TlsPolicy: 'OPTIONAL',
      MaxDeliverySeconds: 50_400,
    });
    expect(await domains.senderState(domain.name)).toMatchObject({ configurationSet: name });
  });

  it('a refusal by SES changes nothing: 429 while SES throttles, and the settings stay as they were', async () => {
    const domain = await add();
    ses.on(CreateConfigurationSetCommand).rejects(sesError(TooManyRequestsException));
    const response = await patch(domain.id, { tls: 'enforced', open_tracking: true });
    expect(response.statusCode).toBe(429);
    expect(parseBody(response)).toMatchObject({ name: 'rate_limit_exceeded' });
    expect(await get(domain.id)).toMatchObject({ tls: 'opportunistic', open_tracking: false });
    expect(await domains.senderState(domain.name)).toMatchObject({ openTracking: false });
  });

  it('tracking_subdomain: Tracking and TrackingCAA records; the set takes the host (HTTPS) only once its CNAME is seen in DNS', async () => {
    const domain = await add();
    expect((await patch(domain.id, { tracking_subdomain: 'links' })).statusCode).toBe(200);
    let body = await get(domain.id);
    expect(body.tracking_subdomain).toBe('links');
    const tracking = body.records.filter((r: { record: string }) => r.record.startsWith('Tracking'));
    expect(tracking).toEqual([
      {
        record: 'Tracking',
        type: 'CNAME',
        name: `links.${domain.name}`,
        value: FRONT,
        ttl: 'Auto',
        status: 'pending',
      },
      // No CAA anywhere above the host: nothing keeps Amazon from issuing its certificate.
      {
        record: 'TrackingCAA',
        type: 'CAA',
        name: domain.name,
        value: '0 issue "amazon.com"',
        ttl: 'Auto',
        status: 'verified',
      },
    ]);
    expectResendShape(body, 'Domain');
    // Not published: SES keeps its own host (a host that does not resolve would break every link).
    expect(setCalls()).toEqual([]);

    published.cname.set(`links.${domain.name}`, [`${FRONT}.`]);
    body = await get(domain.id);
    expect(body.records.find((r: { record: string }) => r.record === 'Tracking').status).toBe('verified');
    expect(setCalls()).toEqual([
      expect.objectContaining({
        ConfigurationSetName: `${PREFIX}${domain.id}`,
        DeliveryOptions: { TlsPolicy: 'OPTIONAL', MaxDeliverySeconds: 50_400 },
        TrackingOptions: { CustomRedirectDomain: `links.${domain.name}`, HttpsPolicy: 'REQUIRE' },
      }),
    ]);
    expect(await domains.senderState(domain.name)).toMatchObject({
      configurationSet: `${PREFIX}${domain.id}`,
    });

    // Changed (never removed): while the new host is pending, the set keeps the one that works.
    ses.on(CreateConfigurationSetCommand).rejects(sesError(AlreadyExistsException));
    ses.on(CreateConfigurationSetEventDestinationCommand).rejects(sesError(AlreadyExistsException));
    ses.on(PutConfigurationSetDeliveryOptionsCommand).resolves(meta);
    ses.on(PutConfigurationSetTrackingOptionsCommand).resolves(meta);
    expect((await patch(domain.id, { tracking_subdomain: `t.${domain.name}` })).statusCode).toBe(200);
    expect(ses.commandCalls(PutConfigurationSetTrackingOptionsCommand)).toEqual([]);
    body = await get(domain.id);
    expect(body.tracking_subdomain).toBe('t');
    expect(body.records.find((r: { record: string }) => r.record === 'Tracking')).toMatchObject({
      name: `t.${domain.name}`,
      status: 'pending',
    });
    expect(body.tracking_host).toEqual({
      name: `t.${domain.name}`,
      status: 'pending',
      in_use: `links.${domain.name}`,
    });
    expect(ses.commandCalls(PutConfigurationSetTrackingOptionsCommand)).toEqual([]);
    // Published and served: the set takes it.
    published.cname.set(`t.${domain.name}`, [FRONT]);
    body = await get(domain.id);
    expect(ses.commandCalls(PutConfigurationSetTrackingOptionsCommand).map((c) => c.args[0].input)).toEqual([
      {
        ConfigurationSetName: `${PREFIX}${domain.id}`,
        CustomRedirectDomain: `t.${domain.name}`,
        HttpsPolicy: 'REQUIRE',
      },
    ]);
    expect(body.tracking_host).toEqual({
      name: `t.${domain.name}`,
      status: 'verified',
      in_use: `t.${domain.name}`,
    });
  });

  it("TrackingCAA: pending while the domain's CAA records leave Amazon out, verified once they name it; a DNS failure is temporary_failure", async () => {
    const domain = await add({ tracking_subdomain: 'links' });
    published.caa.set(domain.name, ['letsencrypt.org']);
    const caa = async () =>
      (await get(domain.id)).records.find((r: { record: string }) => r.record === 'TrackingCAA').status;
    expect(await caa()).toBe('pending');
    published.caa.set(domain.name, ['letsencrypt.org', 'amazon.com']);
    expect(await caa()).toBe('verified');
    published.failing = true;
    const body = await get(domain.id);
    expect(body.records.find((r: { record: string }) => r.record === 'Tracking').status).toBe(
      'temporary_failure',
    );
    expectResendShape(body, 'Domain');
  });

  it('400 for a tracking subdomain where the deployment has no HTTPS front, naming what to set up', async () => {
    const bare = { ...deps, sending: sending(undefined) };
    const domain = await add();
    const response = await patch(domain.id, { tracking_subdomain: 'links' }, bare);
    expect(response.statusCode).toBe(400);
    expect(parseBody(response)).toMatchObject({
      name: 'validation_error',
      message: expect.stringContaining('trackingHttpsTarget'),
      errors: [{ field: 'tracking_subdomain' }],
    });
    // Tracking itself needs no front.
    expect((await patch(domain.id, { open_tracking: true }, bare)).statusCode).toBe(200);
  });

  it('400 for what Resend refuses or this service lacks; 404 for an unknown domain', async () => {
    const domain = await add();
    for (const body of [
      { capabilities: { receiving: 'enabled' } },
      { capabilities: { sending: 'disabled' } },
      { tls: 'strict' },
      { open_tracking: 'yes' },
      { tracking_subdomain: '' },
      { tracking_subdomain: 'a b' },
      { region: 'us-east-1' },
      { name: 'other.test' },
    ]) {
      const response = await patch(domain.id, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(parseBody(response).name).toBe('validation_error');
    }
    expect(
      (await patch(domain.id, { capabilities: { sending: 'enabled', receiving: 'disabled' } })).statusCode,
    ).toBe(200);
    expect((await patch('dom_00000000000000000000000000', { open_tracking: true })).statusCode).toBe(404);
    expect((await patch('nope', { open_tracking: true })).statusCode).toBe(404);
  });
});

describe("POST /v1/domains with Resend's fields", () => {
  it('takes the settings, custom_return_path and the stack region; another region is 400', async () => {
    const name = fresh();
    const response = await create({
      name,
      region: 'eu-west-1',
      custom_return_path: 'bounces',
      open_tracking: true,
      tls: 'enforced',
      capabilities: { sending: 'enabled' },
    });
    expect(response.statusCode).toBe(201);
    const body = parseBody(response);
    expect(body).toMatchObject({ open_tracking: true, click_tracking: false, tls: 'enforced' });
    expect(body.mail_from_domain).toBe(`bounces.${name}`);
    expect(ses.commandCalls(PutEmailIdentityMailFromAttributesCommand)[0]?.args[0].input).toMatchObject({
      EmailIdentity: name,
      MailFromDomain: `bounces.${name}`,
    });
    expect(body.records.filter((r: { record: string }) => r.record === 'SPF')).toEqual([
      expect.objectContaining({ type: 'MX', name: `bounces.${name}` }),
      expect.objectContaining({ type: 'TXT', name: `bounces.${name}` }),
    ]);
    // Enforced TLS from the first send: the set was put before the domain was stored.
    expect(setCalls()).toEqual([expect.objectContaining({ ConfigurationSetName: `${PREFIX}${body.id}` })]);
    expect(await domains.senderState(name)).toMatchObject({
      openTracking: true,
      configurationSet: `${PREFIX}${body.id}`,
    });
    expectResendShape(body, 'CreateDomainResponse');
    // The MAIL FROM records are read for the return path it was created with.
    ses.on(GetEmailIdentityCommand, { EmailIdentity: name }).resolves(identity(name, `bounces.${name}`));
    expect((await get(body.id)).records.find((r: { type: string }) => r.type === 'MX').status).toBe(
      'verified',
    );

    const elsewhere = await create({ name: fresh(), region: 'us-east-1' });
    expect(elsewhere.statusCode).toBe(400);
    expect(parseBody(elsewhere)).toMatchObject({
      errors: [{ field: 'region', message: expect.stringContaining('eu-west-1') }],
    });
  });

  it('a set SES refuses at creation leaves nothing stored: the name is free for the retry', async () => {
    const name = fresh();
    ses.on(CreateConfigurationSetCommand).rejects(sesError(TooManyRequestsException));
    expect((await create({ name, tls: 'enforced' })).statusCode).toBe(429);
    expect(await domains.senderState(name)).toBeNull();
    ses.on(CreateConfigurationSetCommand).resolves(meta);
    expect((await create({ name, tls: 'enforced' })).statusCode).toBe(201);
  });

  it('a set SES cannot make once the identity is made answers what exists: the identity SES holds, which the retry adopts', async () => {
    const name = fresh();
    const denied = Object.assign(new Error('not authorized to perform: ses:CreateConfigurationSet'), {
      name: 'AccessDeniedException',
    });
    ses.on(CreateConfigurationSetCommand).rejects(denied);
    const failed = await create({ name, tls: 'enforced' });
    expect(failed.statusCode).toBe(500);
    const message = parseBody(failed).message as string;
    expect(message).not.toContain('nothing was created');
    expect(message).toContain(`SES now holds the identity ${name}`);
    expect(message).toContain('adopts it');
    expect(await domains.senderState(name)).toBeNull();
    // The retry meets the identity (AlreadyExists), ours by its tag: adopted.
    ses.on(CreateConfigurationSetCommand).resolves(meta);
    ses.on(CreateEmailIdentityCommand, { EmailIdentity: name }).rejects(sesError(AlreadyExistsException));
    const retried = (await makeCreate(deps)(
      httpEvent({ method: 'POST', path: '/v1/domains', token, body: { name, tls: 'enforced' } }),
      context(),
    )) as Response;
    expect(retried.statusCode, retried.body as string).toBe(201);
  });
});

/** The scheduled check's deps, at the clock's time, seeing this one domain only (the table has others). */
const checkOf = (id: string, now: () => number): DomainDeps => ({
  ...deps,
  clock: { now: () => new Date(now()) },
  domains: Object.assign(Object.create(domains), {
    async *all() {
      const stored = await domains.get(id);
      if (stored) yield stored;
    },
  }),
});

describe('the scheduled check', () => {
  it('looks for tracking records still pending every 5 minutes, not every run; once seen, the set takes the host', async () => {
    const domain = await add({ tracking_subdomain: 'links' });
    await get(domain.id); // SES has seen its MAIL FROM records: only the tracking ones wait
    let now = Date.now();
    const only = checkOf(domain.id, () => now);
    now += 60_000;
    expect(await checkDomains(only)).toEqual({ checked: 0, changed: 0 });
    now += TRACKING_RECHECK_MS;
    published.cname.set(`links.${domain.name}`, [FRONT]);
    expect((await checkDomains(only)).checked).toBe(1);
    expect((await domains.get(domain.id))?.configuration_set).toEqual({
      name: `${PREFIX}${domain.id}`,
      tls: 'opportunistic',
      redirect_domain: `links.${domain.name}`,
    });
  });
});

describe('a tracking host before its front serves it', () => {
  it('stays out of the set while the front does not serve it over HTTPS (its record pending, the reason shown), on reads and on the scheduled check; in once it does', async () => {
    const domain = await add({ tracking_subdomain: 'links' });
    const host = `links.${domain.name}`;
    published.cname.set(host, [FRONT]);
    unserved.set(host, `${host} does not answer over HTTPS: its certificate is not valid for this name`);
    let body = await get(domain.id);
    expect(body.records.find((r: { record: string }) => r.record === 'Tracking').status).toBe('pending');
    expect(body.tracking_host).toEqual({
      name: host,
      status: 'pending',
      problem: expect.stringContaining('its certificate is not valid for this name'),
      in_use: null,
    });
    expectResendShape(body, 'Domain');
    expect(setCalls()).toEqual([]);
    let now = Date.now() + TRACKING_RECHECK_MS;
    const only = checkOf(domain.id, () => now);
    expect((await checkDomains(only)).checked).toBe(1);
    expect(setCalls()).toEqual([]);
    expect((await domains.get(domain.id))?.tracking_problem).toContain(host);

    unserved.clear();
    now += TRACKING_RECHECK_MS;
    expect((await checkDomains(only)).checked).toBe(1);
    expect(setCalls()).toEqual([
      expect.objectContaining({ TrackingOptions: { CustomRedirectDomain: host, HttpsPolicy: 'REQUIRE' } }),
    ]);
    body = await get(domain.id);
    expect(body.tracking_host).toEqual({ name: host, status: 'verified', in_use: host });
  });

  it('stays out of the set until SES has verified the domain (SES refuses a custom redirect domain it has not verified)', async () => {
    const name = fresh();
    const pending = {
      ...identity(name),
      VerifiedForSendingStatus: false,
      VerificationStatus: 'PENDING' as const,
      DkimAttributes: { SigningEnabled: true, Status: 'PENDING' as const, Tokens: TOKENS },
    };
    ses
      .on(CreateEmailIdentityCommand, { EmailIdentity: name })
      .resolves({ ...created(), VerifiedForSendingStatus: false, DkimAttributes: pending.DkimAttributes });
    ses.on(GetEmailIdentityCommand, { EmailIdentity: name }).resolves(pending);
    const response = (await makeCreate(deps)(
      httpEvent({ method: 'POST', path: '/v1/domains', token, body: { name, tracking_subdomain: 'links' } }),
      context(),
    )) as Response;
    expect(response.statusCode).toBe(201);
    const { id } = parseBody(response);
    published.cname.set(`links.${name}`, [FRONT]);
    let body = await get(id);
    expect(body.tracking_host).toMatchObject({
      status: 'pending',
      problem: expect.stringContaining(`SES has not verified ${name}`),
    });
    expect(setCalls()).toEqual([]);

    ses.on(GetEmailIdentityCommand, { EmailIdentity: name }).resolves(identity(name));
    body = await get(id);
    expect(body.tracking_host).toEqual({
      name: `links.${name}`,
      status: 'verified',
      in_use: `links.${name}`,
    });
    expect(setCalls()).toHaveLength(1);
  });
});

describe('DELETE /v1/domains/{id}', () => {
  it("retires the domain's own set rather than deleting it (SES reports its emails' later events through it); the scheduled check deletes it 30 days on", async () => {
    const domain = await add({ tls: 'enforced' });
    ses.on(DeleteEmailIdentityCommand).resolves(meta);
    const response = (await makeDelete(deps)(withId('DELETE', domain.id), context())) as Response;
    expect(response.statusCode).toBe(200);
    expect(ses.commandCalls(DeleteConfigurationSetCommand)).toHaveLength(0);
    const name = `${PREFIX}${domain.id}`;
    let now = Date.now();
    const later: DomainDeps = { ...deps, clock: { now: () => new Date(now) } };
    now += RETIRED_SET_KEEP_MS - 60_000;
    await checkDomains(later);
    expect(ses.commandCalls(DeleteConfigurationSetCommand)).toHaveLength(0);
    now += 120_000;
    // Already gone in SES (NotFound) is as good as deleted.
    ses.on(DeleteConfigurationSetCommand).rejects(sesError(NotFoundException));
    await checkDomains(later);
    expect(ses.commandCalls(DeleteConfigurationSetCommand).map((c) => c.args[0].input)).toContainEqual({
      ConfigurationSetName: name,
    });
    expect(await domains.retiredConfigurationSets(now)).not.toContain(name);
  });
});

describe('SES and the store cannot stay apart', () => {
  const updatePaths = () => {
    ses.on(CreateConfigurationSetCommand).rejects(sesError(AlreadyExistsException));
    ses.on(CreateConfigurationSetEventDestinationCommand).rejects(sesError(AlreadyExistsException));
    ses.on(UpdateConfigurationSetEventDestinationCommand).resolves(meta);
    ses.on(PutConfigurationSetDeliveryOptionsCommand).resolves(meta);
    ses.on(PutConfigurationSetTrackingOptionsCommand).resolves(meta);
  };
  const lastTls = () =>
    ses.commandCalls(PutConfigurationSetDeliveryOptionsCommand).at(-1)?.args[0].input.TlsPolicy;

  it('a refresh that loses its race after putting its set puts the stored one back', async () => {
    const domain = await add({ tls: 'enforced' });
    const stale = await domains.get(domain.id);
    updatePaths();
    expect((await patch(domain.id, { tls: 'opportunistic' })).statusCode).toBe(200);
    expect(lastTls()).toBe('OPTIONAL');
    // The stale copy (enforced) converges its set (REQUIRE), then loses the save.
    expect(await refreshDomain(deps, stale as NonNullable<typeof stale>, true, true)).toBeNull();
    const tls = ses
      .commandCalls(PutConfigurationSetDeliveryOptionsCommand)
      .map((c) => c.args[0].input.TlsPolicy);
    expect(tls.slice(-2)).toEqual(['REQUIRE', 'OPTIONAL']);
  });

  it('a change SES takes half of (TLS put, tracking throttled) answers the error and puts the stored set back', async () => {
    const domain = await add({ tls: 'enforced' });
    updatePaths();
    ses
      .on(PutConfigurationSetTrackingOptionsCommand)
      .rejectsOnce(sesError(TooManyRequestsException))
      .resolves(meta);
    const response = await patch(domain.id, { tls: 'opportunistic' });
    expect(response.statusCode).toBe(429);
    expect(await get(domain.id)).toMatchObject({ tls: 'enforced' });
    expect(
      ses.commandCalls(PutConfigurationSetDeliveryOptionsCommand).map((c) => c.args[0].input.TlsPolicy),
    ).toEqual(['OPTIONAL', 'REQUIRE']);
  });

  it('the hourly check puts every set again, its event destination as the stack has it now', async () => {
    const domain = await add({ tls: 'enforced' });
    await get(domain.id);
    updatePaths();
    let now = Date.now() + VERIFIED_RECHECK_MS + 1000;
    const only = checkOf(domain.id, () => now);
    await checkDomains(only);
    expect(lastTls()).toBe('REQUIRE');
    expect(ses.commandCalls(UpdateConfigurationSetEventDestinationCommand)[0]?.args[0].input).toMatchObject({
      ConfigurationSetName: `${PREFIX}${domain.id}`,
      EventDestination: { SnsDestination: { TopicArn: TOPIC } },
    });
    now += 60_000; // not again within the hour
    const calls = ses.commandCalls(PutConfigurationSetDeliveryOptionsCommand).length;
    await checkDomains(only);
    expect(ses.commandCalls(PutConfigurationSetDeliveryOptionsCommand)).toHaveLength(calls);
  });

  it('a request whose change was stored but not what sends read is repaired by its retry', async () => {
    const domain = await add();
    expect((await patch(domain.id, { open_tracking: true })).statusCode).toBe(200);
    // The name item's write failed after the domain's (as a throttled UpdateItem would leave it).
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: keys.domainName(domain.name), sk: keys.domainNameSk },
        UpdateExpression: 'SET open_tracking = :f',
        ExpressionAttributeValues: { ':f': false },
      }),
    );
    expect((await patch(domain.id, { open_tracking: true })).statusCode).toBe(200);
    expect(await domains.senderState(domain.name)).toMatchObject({ openTracking: true });
  });

  it('a set SES refuses during a refresh keeps the tracking records; a DNS hiccup keeps the tracking host in the set', async () => {
    const domain = await add({ tracking_subdomain: 'links' });
    published.cname.set(`links.${domain.name}`, [FRONT]);
    ses.on(CreateConfigurationSetCommand).rejects(sesError(TooManyRequestsException));
    let body = await get(domain.id);
    expect(body.records.map((r: { record: string }) => r.record)).toContain('Tracking');
    expect(body.records.find((r: { record: string }) => r.record === 'Tracking').status).toBe('verified');
    expect((await domains.get(domain.id))?.configuration_set).toBeUndefined();
    ses.on(CreateConfigurationSetCommand).resolves(meta);
    body = await get(domain.id);
    expect((await domains.get(domain.id))?.configuration_set?.redirect_domain).toBe(`links.${domain.name}`);
    const puts = setCalls().length;
    published.failing = true;
    body = await get(domain.id);
    expect(body.records.find((r: { record: string }) => r.record === 'Tracking').status).toBe(
      'temporary_failure',
    );
    expect((await domains.get(domain.id))?.configuration_set?.redirect_domain).toBe(`links.${domain.name}`);
    expect(setCalls()).toHaveLength(puts);
  });
});

describe('tracking subdomain rules', () => {
  it("refuses the MAIL FROM subdomain's label; other changes stand on a deployment that lost its front", async () => {
    const domain = await add({ custom_return_path: 'mail' });
    const response = await patch(domain.id, { tracking_subdomain: 'mail' });
    expect(response.statusCode).toBe(400);
    expect(parseBody(response).message).toContain('MAIL FROM');
    expect((await patch(domain.id, { tracking_subdomain: 'links' })).statusCode).toBe(200);
    const noFront = { ...deps, sending: sending(undefined) };
    expect((await patch(domain.id, { open_tracking: true }, noFront)).statusCode).toBe(200);
    expect((await patch(domain.id, { tracking_subdomain: 't' }, noFront)).statusCode).toBe(400);
  });
});

describe('concurrent writers', () => {
  it('a refresh that read the domain before a change cannot undo it: nothing is stored over the change', async () => {
    const domain = await add();
    const stale = await domains.get(domain.id);
    expect((await patch(domain.id, { open_tracking: true })).statusCode).toBe(200);
    // The stale copy's refresh finds SES's state changed (a record now failing) and tries to store it.
    ses.on(GetEmailIdentityCommand, { EmailIdentity: domain.name }).resolves({
      ...identity(domain.name),
      MailFromAttributes: {
        MailFromDomain: `send.${domain.name}`,
        MailFromDomainStatus: 'FAILED',
        BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
      },
    });
    expect(await refreshDomain(deps, stale as NonNullable<typeof stale>)).toBeNull();
    expect((await domains.get(domain.id))?.open_tracking).toBe(true);
    // A read of the domain answers the newer one.
    expect(await get(domain.id)).toMatchObject({ open_tracking: true });
  });
});

describe('the name item the send path reads', () => {
  it('takes a domain write only over an older one: a late write of an older version leaves the newer options', async () => {
    const domain = await add();
    const stored = await domains.get(domain.id);
    if (!stored) throw new Error('not stored');
    expect(await domains.save({ ...stored, open_tracking: true }, 'existing')).toBe(true);
    // A newer writer's name update got there first (version 9 of the domain).
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: keys.domainName(domain.name), sk: keys.domainNameSk },
        UpdateExpression: 'SET domain_version = :v, click_tracking = :t',
        ExpressionAttributeValues: { ':v': 9, ':t': true },
      }),
    );
    const again = await domains.get(domain.id);
    expect(
      await domains.save({ ...(again as NonNullable<typeof again>), open_tracking: false }, 'existing'),
    ).toBe(true);
    expect(await domains.senderState(domain.name)).toMatchObject({ openTracking: true, clickTracking: true });
  });
});

describe('a read of the domain', () => {
  it('writes again what the send path reads: one whose write failed after the domain item (throttled) is repaired by the next read', async () => {
    const domain = await add();
    await get(domain.id);
    expect(await domains.senderState(domain.name)).toMatchObject({ sendable: true });
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: keys.domainName(domain.name), sk: keys.domainNameSk },
        UpdateExpression: 'SET sendable = :f, #status = :p',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':f': false, ':p': 'pending' },
      }),
    );
    await get(domain.id);
    expect(await domains.senderState(domain.name)).toMatchObject({ sendable: true, status: 'verified' });
  });
});

describe('senderOptions (the send consumer)', () => {
  it("reads a domain's options once a minute per instance; an unknown domain sends with the defaults", async () => {
    let reads = 0;
    let now = 0;
    const options = senderOptions(
      {
        senderState: async (name) => {
          reads++;
          return name === 'acme.test'
            ? {
                status: 'verified',
                sendable: true,
                openTracking: true,
                clickTracking: false,
                configurationSet: 'S',
              }
            : null;
        },
      },
      { now: () => new Date(now) },
    );
    expect(await options('acme.test')).toEqual({
      openTracking: true,
      clickTracking: false,
      configurationSet: 'S',
    });
    now += 59_000;
    await options('acme.test');
    expect(reads).toBe(1);
    now += 2_000;
    await options('acme.test');
    expect(reads).toBe(2);
    expect(await options('gone.test')).toEqual({ openTracking: false, clickTracking: false });
  });
});
