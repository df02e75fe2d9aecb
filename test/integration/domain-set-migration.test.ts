/**
 * Domains' own configuration sets named by the prefix of earlier versions (the stack's name cut to
 * 33 characters, which two stacks could share) move to the prefix with the stack name's digest:
 * the scheduled check makes the set under its new name with the same options and event
 * destination, switches the domain to it, and retires the old one (kept 30 days for its emails'
 * late events, then deleted), so the legacy grant can go. The table on dynalite, SES answering with
 * the SDK's documented shapes (aws-sdk-client-mock).
 */
import {
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  CreateEmailIdentityCommand,
  type CreateEmailIdentityCommandOutput,
  DeleteConfigurationSetCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { SesConfigurationSets } from '../../functions/adapters/ses/configuration-sets.js';
import { OWNER_TAG, SesIdentities } from '../../functions/adapters/ses/identities.js';
import {
  checkDomains,
  type DomainDeps,
  MOVE_RETRY_MS,
  RETIRED_SET_KEEP_MS,
  senderOptions,
} from '../../functions/domains/domains.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-domain.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-domain.js';
import { makeHandler as makeUpdate } from '../../functions/handlers/update-domain.js';
import {
  domainConfigurationSetPrefix,
  legacyDomainConfigurationSetPrefix,
} from '../../lib/domain-set-prefixes.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

const ses = mockClient(SESv2Client);
const meta = { $metadata: {} };
const OWNER = 'test-table';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:events';
const STACK = 'EmailService-Production-EuropeWest-Primary';
const OLD = legacyDomainConfigurationSetPrefix(STACK);
const NEW = domainConfigurationSetPrefix(STACK);
const TOKENS = ['4q4ctwbmvgx7mszy5thz6yw3vkmz3p2x', 'lq2lzlwjjyp4ypvcfzgpqtlxiiv7l6ws'];

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

let table: TestTable;
let token: string;
let domains: DynamoDomainRepository;
/** The deployment before the upgrade (sets named by the old prefix), and after it. */
let before: Parameters<typeof makeCreate>[0];
let after: Parameters<typeof makeCreate>[0];
let now = Date.now();
const client = () =>
  new SESv2Client({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const sending = (prefix: string): NonNullable<DomainDeps['sending']> => ({
  configurationSets: new SesConfigurationSets(client(), {
    eventsTopicArn: TOPIC,
    maxDeliverySeconds: 50_400,
    owner: OWNER,
  }),
  dns: { mx: async () => [], cname: async () => [], caaIssuers: async () => [] },
  // No tracking host in these domains: the front is never looked at.
  front: { problem: async () => undefined },
  configurationSetName: (id) => `${prefix}${id}`,
});

beforeAll(async () => {
  table = await startTestTable();
  const apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  domains = new DynamoDomainRepository(table.db, table.tableName);
  token = await fullAccessKey(apiKeys);
  const common = {
    apiKeys,
    domains,
    identities: new SesIdentities(client(), { region: 'eu-west-1', owner: OWNER }),
    clock: { now: () => new Date(now) },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    region: 'eu-west-1',
  };
  before = { ...common, sending: sending(OLD) };
  after = { ...common, sending: sending(NEW) };
});
afterAll(() => table.stop());
beforeEach(() => {
  ses.reset();
  ses.on(PutEmailIdentityMailFromAttributesCommand).resolves(meta);
  ses.on(CreateConfigurationSetCommand).resolves(meta);
  ses.on(CreateConfigurationSetEventDestinationCommand).resolves(meta);
  ses.on(DeleteEmailIdentityCommand).resolves(meta);
  ses.on(DeleteConfigurationSetCommand).resolves(meta);
  now = Date.now();
});

type Response = APIGatewayProxyStructuredResultV2;
let names = 0;
/** A domain with its own set (TLS enforced), made by the deployment before the upgrade. */
const legacyDomain = async () => {
  const name = `moving${++names}.test`;
  ses.on(CreateEmailIdentityCommand, { EmailIdentity: name }).resolves(created());
  ses.on(GetEmailIdentityCommand, { EmailIdentity: name }).resolves(identity(name));
  const response = (await makeCreate(before)(
    httpEvent({ method: 'POST', path: '/v1/domains', token, body: { name, tls: 'enforced' } }),
    context(),
  )) as Response;
  expect(response.statusCode, response.body as string).toBe(201);
  const { id } = parseBody(response) as { id: string };
  expect((await domains.get(id))?.configuration_set?.name).toBe(`${OLD}${id}`);
  ses.resetHistory();
  return { id, name };
};
/** The events the upgraded deployment's check raised (every type wanted). */
const raised: string[] = [];
const recordingEvents = {
  subscriptions: async () => ({
    wants: () => true,
    publish: async (events: { type: string }[]) => {
      raised.push(...events.map((event) => event.type));
    },
  }),
};
/** The check of the upgraded deployment, over this domain only. */
const checkOf = (id: string): DomainDeps => ({
  ...after,
  events: recordingEvents as unknown as DomainDeps['events'],
  domains: Object.assign(Object.create(domains), {
    async *all() {
      const stored = await domains.get(id);
      if (stored) yield stored;
    },
  }),
});
const setsMade = () => ses.commandCalls(CreateConfigurationSetCommand).map((c) => c.args[0].input);

describe("the prefix of domains' sets", () => {
  it('differs for two stacks whose names share their first 33 characters (the old prefix did not), and fits SES with a domain id', () => {
    const other = `${STACK.slice(0, 33)}-Secondary`;
    expect(legacyDomainConfigurationSetPrefix(other)).toBe(OLD);
    expect(domainConfigurationSetPrefix(other)).not.toBe(NEW);
    const id = 'dom_01m80n2x4cf0t8d1v2kq7w5mzs';
    for (const stack of [STACK, other, 'EmailService', 'x'.repeat(128)]) {
      const prefix = domainConfigurationSetPrefix(stack);
      expect(prefix.length, stack).toBeLessThanOrEqual(34);
      expect(`${prefix}${id}`).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    }
  });
});

describe('a domain whose set the old prefix named', () => {
  it('is moved by the scheduled check: the set made under its new name with the same options and destination, sends switched to it, the old one retired for 30 days and then deleted', async () => {
    const { id, name } = await legacyDomain();
    // Verified by the old deployment's check first, so what the move itself raises shows.
    await checkDomains({ ...checkOf(id), sending: before.sending });
    ses.resetHistory();
    raised.length = 0;
    now += MOVE_RETRY_MS;
    expect(await checkDomains(checkOf(id))).toMatchObject({ checked: 1 });
    // A move changes nothing its users see: no domain.updated.
    expect(raised).toEqual([]);
    expect(setsMade()).toEqual([
      expect.objectContaining({
        ConfigurationSetName: `${NEW}${id}`,
        DeliveryOptions: { TlsPolicy: 'REQUIRE', MaxDeliverySeconds: 50_400 },
      }),
    ]);
    expect(
      ses.commandCalls(CreateConfigurationSetEventDestinationCommand).map((c) => c.args[0].input),
    ).toEqual([
      expect.objectContaining({
        ConfigurationSetName: `${NEW}${id}`,
        EventDestination: expect.objectContaining({ SnsDestination: { TopicArn: TOPIC } }),
      }),
    ]);
    expect((await domains.get(id))?.configuration_set).toEqual({ name: `${NEW}${id}`, tls: 'enforced' });
    expect(await senderOptions(domains, { now: () => new Date(now) })(name)).toMatchObject({
      configurationSet: `${NEW}${id}`,
    });
    // Kept while its emails' late events may come, then deleted by the check.
    expect(await domains.retiredConfigurationSets(now + RETIRED_SET_KEEP_MS - 60_000)).not.toContain(
      `${OLD}${id}`,
    );
    expect(ses.commandCalls(DeleteConfigurationSetCommand)).toHaveLength(0);
    now += RETIRED_SET_KEEP_MS + 60_000;
    await checkDomains(checkOf(id));
    expect(ses.commandCalls(DeleteConfigurationSetCommand).map((c) => c.args[0].input)).toEqual([
      { ConfigurationSetName: `${OLD}${id}` },
    ]);
    expect(await domains.retiredConfigurationSets(now)).not.toContain(`${OLD}${id}`);
  });

  it('is moved whatever its status (a failed domain is not otherwise checked), and once only', async () => {
    const { id } = await legacyDomain();
    const stored = await domains.get(id);
    if (!stored) throw new Error('not stored');
    expect(await domains.save({ ...stored, status: 'failed', sendable: false }, 'existing')).toBe(true);
    now += MOVE_RETRY_MS;
    await checkDomains(checkOf(id));
    expect((await domains.get(id))?.configuration_set?.name).toBe(`${NEW}${id}`);
    ses.resetHistory();
    now += 60_000;
    expect(await checkDomains(checkOf(id))).toMatchObject({ checked: 0 });
    expect(setsMade()).toEqual([]);
  });

  it('is not moved again every run when SES refuses the move: 5 minutes on, while sends go on with the old set', async () => {
    const { id } = await legacyDomain();
    ses.on(CreateConfigurationSetCommand, { ConfigurationSetName: `${NEW}${id}` }).rejects(
      Object.assign(new Error('Domain is not verified under this account.'), {
        name: 'BadRequestException',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    // Verified by the old deployment's check just now: not due for anything but its move, and
    // that not yet.
    await checkDomains({ ...checkOf(id), sending: before.sending });
    ses.resetHistory();
    expect(await checkDomains(checkOf(id))).toMatchObject({ checked: 0 });
    now += MOVE_RETRY_MS;
    await checkDomains(checkOf(id));
    expect(setsMade().map((input) => input.ConfigurationSetName)).toContain(`${NEW}${id}`);
    expect((await domains.get(id))?.configuration_set?.name).toBe(`${OLD}${id}`);
    ses.resetHistory();
    now += 60_000;
    await checkDomains(checkOf(id));
    expect(setsMade()).toEqual([]);
    now += MOVE_RETRY_MS;
    await checkDomains(checkOf(id));
    expect(setsMade().map((input) => input.ConfigurationSetName)).toContain(`${NEW}${id}`);
  });

  it('moves on a change of its settings too, retiring the old set', async () => {
    const { id } = await legacyDomain();
    const response = (await makeUpdate(after)(
      httpEvent({
        method: 'PATCH',
        path: `/v1/domains/${id}`,
        routeKey: 'PATCH /v1/domains/{id}',
        token,
        pathParameters: { id },
        body: { open_tracking: true },
      }),
      context(),
    )) as Response;
    expect(response.statusCode, response.body as string).toBe(200);
    expect((await domains.get(id))?.configuration_set?.name).toBe(`${NEW}${id}`);
    expect(await domains.retiredConfigurationSets(now + RETIRED_SET_KEEP_MS + 1)).toContain(`${OLD}${id}`);
  });

  it('retires its old set when deleted before it moved, as well as its new name', async () => {
    const { id } = await legacyDomain();
    const response = (await makeDelete(after)(
      httpEvent({
        method: 'DELETE',
        path: `/v1/domains/${id}`,
        routeKey: 'DELETE /v1/domains/{id}',
        token,
        pathParameters: { id },
      }),
      context(),
    )) as Response;
    expect(response.statusCode).toBe(200);
    const retired = await domains.retiredConfigurationSets(now + RETIRED_SET_KEEP_MS + 1);
    expect(retired).toEqual(expect.arrayContaining([`${OLD}${id}`, `${NEW}${id}`]));
  });
});
