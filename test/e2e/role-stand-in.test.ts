import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetConfigurationSetCommand, GetEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { ROUTES } from '../../functions/routes.js';
import { buildFunction } from '../../lib/bundling.js';
import { domainConfigurationSetPrefix } from '../../lib/domain-set-prefixes.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { LOCAL_CONFIGURATION_SET, LOCAL_EVENTS_TOPIC_ARN } from '../../local/ses-configuration-sets.js';
import { httpEvent, parseBody } from '../support/events.js';
import { httpsClient } from '../support/https.js';
import {
  type Intercept,
  invokeBuilt,
  type RoleStandIn,
  startRoleStandIn,
  templateEnvironment,
} from '../support/role-stand-in.js';
import { logicalId, policiesOf, synthStack } from '../support/template.js';

/**
 * Built functions run as on AWS: each in a fresh Node process with only its template's environment,
 * every AWS call through a stand-in that refuses what the function's role in the synthesized
 * template does not grant (test/support/role-stand-in.ts), on paths the local service's scenarios
 * do not take: a scheduled check that loses its race to a PATCH, a create whose SES answer is lost.
 */
const BUILT = ['create-domain', 'check-domains'] as const;
type Built = (typeof BUILT)[number];

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let service: LocalService;
let stack: EmailServiceStack;
let template: Template;
let dir: string;
let ses: SESv2Client;
let db: ReturnType<typeof createDocumentClient>;
let repos: ReturnType<typeof createRepositories>;

beforeAll(async () => {
  // esbuild builds in a process of its own, beside the synth.
  dir = mkdtempSync(join(tmpdir(), 'role-stand-in-'));
  const built = Promise.all(BUILT.map((name) => buildFunction(name, join(dir, name))));
  ({ stack, template } = synthStack());
  await built;
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 3_600_000,
    rateLimitPerSecond: 1000,
    sweepIntervalMs: 3_600_000,
    domainCheckIntervalMs: 3_600_000,
  });
  ses = new SESv2Client({ endpoint: service.endpoints.ses, region: 'us-east-1', credentials });
  db = createDocumentClient(
    new DynamoDBClient({ endpoint: service.endpoints.dynamodb, region: 'us-east-1', credentials }),
  );
  repos = createRepositories(service.tableName, db);
}, 60_000);

afterAll(async () => {
  ses?.destroy();
  db?.destroy();
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The built function `name` behind a stand-in for its role; `run` invokes it with its template's environment. */
async function asDeployed(name: Built, intercept?: Intercept) {
  const queues = new Map([
    [logicalId(stack, stack.send.queue), service.queues.send],
    [logicalId(stack, stack.send.deadLetterQueue), service.queues.sendDeadLetters],
    [logicalId(stack, stack.webhooks.queue), service.queues.webhooks],
    [logicalId(stack, stack.webhooks.deadLetterQueue), service.queues.webhookDeadLetters],
  ]);
  // Receiving's (synthesized in us-east-1, where SES receives, as the service runs): the domain
  // functions queue rule syncs.
  const { receiving } = stack;
  if (!receiving) throw new Error(`${stack.region} synthesized no receiving: the local service receives`);
  queues.set(logicalId(stack, receiving.ruleQueue), service.queues.receiptRules);
  queues.set(logicalId(stack, receiving.ruleDeadLetterQueue), service.queues.receiptRulesDeadLetters);
  queues.set(logicalId(stack, receiving.failures), service.queues.receivedFailures);
  const queueIds = new Map([...queues].map(([id, url]) => [url, id]));
  const tableId = logicalId(stack, stack.table.table);
  const localPrefix = `${LOCAL_CONFIGURATION_SET}-`;
  const standIn: RoleStandIn = await startRoleStandIn({
    functionName: name,
    statements: policiesOf(stack, template, name),
    ids: {
      tableId,
      configurationSetId: logicalId(stack, stack.sesEvents.configurationSet),
      // The function names its domains' sets with the local service's prefix (as the local API
      // functions do, so the check sees them as its own and moves none), checked against the
      // template's prefix as the grants test checks the local service's calls.
      domainSets: { localPrefix, templatePrefix: domainConfigurationSetPrefix(stack.stackName) },
      queueIdByUrl: (url) => queueIds.get(url),
    },
    upstream: {
      dynamodb: service.endpoints.dynamodb,
      sqs: service.endpoints.sqs,
      ses: service.endpoints.ses,
      s3: service.endpoints.s3,
    },
    ...(intercept ? { intercept } : {}),
  });
  const id = logicalId(stack, stack.functions[name] as never);
  const variables = template.toJSON().Resources[id].Properties.Environment.Variables;
  const env = {
    ...templateEnvironment(variables, (ref) => {
      if (ref === tableId) return service.tableName;
      if (ref === logicalId(stack, stack.sesEvents.topic)) return LOCAL_EVENTS_TOPIC_ARN;
      const queue = queues.get(ref);
      return queue && standIn.queueUrl(queue);
    }),
    DOMAIN_CONFIGURATION_SET_PREFIX: localPrefix,
    ...standIn.endpoints,
  };
  return {
    standIn,
    run: (event: unknown) => invokeBuilt(join(dir, name), name, event, env),
  };
}

const createEvent = (body: unknown) => {
  const route = ROUTES.find((r) => r.handler === 'create-domain');
  return httpEvent({
    method: 'POST',
    path: '/v1/domains',
    routeKey: `${route?.method} ${route?.path}`,
    token: service.apiKey,
    body,
  });
};

const tlsPolicyOf = async (setName: string) =>
  (await ses.send(new GetConfigurationSetCommand({ ConfigurationSetName: setName }))).DeliveryOptions
    ?.TlsPolicy;

describe('the stand-in', () => {
  it("refuses what a role lacks as each service does: the SDK reads AccessDeniedException (S3's AccessDenied)", async () => {
    const standIn = await startRoleStandIn({
      functionName: 'nothing-granted',
      statements: [],
      ids: {
        tableId: 'Table',
        configurationSetId: 'Set',
        queueIdByUrl: () => 'Queue',
        bucketIdByName: () => 'Bucket',
      },
      upstream: {
        dynamodb: service.endpoints.dynamodb,
        sqs: service.endpoints.sqs,
        ses: service.endpoints.ses,
        s3: service.endpoints.s3,
      },
    });
    const config = { region: 'us-east-1', credentials, maxAttempts: 1 };
    const dynamo = new DynamoDBClient({ ...config, endpoint: standIn.endpoints.AWS_ENDPOINT_URL_DYNAMODB });
    const sqs = new SQSClient({ ...config, endpoint: standIn.endpoints.AWS_ENDPOINT_URL_SQS });
    const sesv2 = new SESv2Client({ ...config, endpoint: standIn.endpoints.AWS_ENDPOINT_URL_SESV2 });
    const s3 = new S3Client({
      ...config,
      endpoint: standIn.endpoints.AWS_ENDPOINT_URL_S3,
      forcePathStyle: true,
    });
    const refusal = (call: Promise<unknown>) =>
      call.then(
        () => 'answered',
        (error: Error & { $metadata?: { httpStatusCode?: number } }) =>
          `${error.name} ${error.$metadata?.httpStatusCode}`,
      );
    try {
      expect(
        await refusal(
          dynamo.send(new GetItemCommand({ TableName: service.tableName, Key: { pk: { S: 'x' } } })),
        ),
      ).toBe('AccessDeniedException 400');
      expect(
        await refusal(
          sqs.send(
            new SendMessageCommand({ QueueUrl: standIn.queueUrl(service.queues.webhooks), MessageBody: 'x' }),
          ),
        ),
      ).toMatch(/^AccessDenied(Exception)? 403$/);
      expect(await refusal(sesv2.send(new GetEmailIdentityCommand({ EmailIdentity: 'x.test' })))).toBe(
        'AccessDeniedException 403',
      );
      expect(await refusal(s3.send(new GetObjectCommand({ Bucket: service.contentBucket, Key: 'x' })))).toBe(
        'AccessDenied 403',
      );
      expect(standIn.denied()).toHaveLength(4);
    } finally {
      for (const client of [dynamo, sqs, sesv2, s3]) client.destroy();
      await standIn.stop();
    }
  });
});

describe('built functions behind a stand-in that refuses what their role lacks', () => {
  it("create-domain whose CreateConfigurationSet answer is lost: the SDK's retry meets the set and updates it, and the domain is added and usable", async () => {
    let lost = 0;
    const { standIn, run } = await asDeployed('create-domain', (call) =>
      call.operation === 'CreateConfigurationSet' && lost++ === 0 ? 'lose' : undefined,
    );
    try {
      const { result, output } = await run(createEvent({ name: 'lost-answer.test', tls: 'enforced' }));
      expect(standIn.denied(), output.join('\n')).toEqual([]);
      expect(result.statusCode, result.body).toBe(201);
      const operations = standIn.calls.map((c) => c.call.operation);
      expect(operations.filter((o) => o === 'CreateConfigurationSet')).toHaveLength(2);
      expect(operations).toContain('PutConfigurationSetDeliveryOptions');
      const domain = parseBody(result);
      // The user sees it, and SES enforces its TLS.
      const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
      try {
        const read = await api.call('GET', `/domains/${domain.id}`);
        expect(read.status).toBe(200);
        expect(read.json).toMatchObject({ id: domain.id, name: 'lost-answer.test', tls: 'enforced' });
      } finally {
        await api.close();
      }
      const stored = await repos.domains.get(domain.id);
      expect(stored?.configuration_set?.name).toBe(`${LOCAL_CONFIGURATION_SET}-${domain.id}`);
      expect(await tlsPolicyOf(stored?.configuration_set?.name ?? '')).toBe('REQUIRE');
    } finally {
      await standIn.stop();
    }
  });

  it('check-domains that loses its store to a PATCH of tls puts back the set as stored (it reads the domain with GetItem)', async () => {
    // A domain with TLS enforced, added by the built create-domain (its set named as on AWS).
    const create = await asDeployed('create-domain');
    const added = await create.run(createEvent({ name: 'raced-check.test', tls: 'enforced' }));
    await create.standIn.stop();
    expect(added.result.statusCode, added.result.body).toBe(201);
    const id = parseBody(added.result).id as string;
    // Last looked at two hours ago: the check puts its set again (the hourly re-put).
    const before = await repos.domains.get(id);
    if (!before?.configuration_set) throw new Error('the domain has no configuration set');
    const setName = before.configuration_set.name;
    expect(
      await repos.domains.save(
        { ...before, checked_at: new Date(Date.now() - 2 * 3_600_000).toISOString() },
        'existing',
      ),
    ).toBe(true);

    const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
    let patched = 0;
    const { standIn, run } = await asDeployed('check-domains', async (call) => {
      // While the check reads SES (after it read the domain), the user changes TLS.
      if (call.operation === 'GetEmailIdentity' && patched++ === 0) {
        const changed = await api.call('PATCH', `/domains/${id}`, { body: { tls: 'opportunistic' } });
        expect(changed.status).toBe(200);
        expect(await tlsPolicyOf(setName)).toBe('OPTIONAL');
      }
      return undefined;
    });
    try {
      const { output } = await run({
        version: '0',
        id: 'scheduled',
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: '123456789012',
        time: new Date().toISOString(),
        region: 'us-east-1',
        resources: [],
        detail: {},
      });
      expect(patched).toBeGreaterThan(0);
      expect(standIn.denied(), output.join('\n')).toEqual([]);
      expect(standIn.calls.map((c) => c.call.operation)).toContain('GetItem');
      // SES holds what is stored: the PATCH's policy, not the one the check read before it.
      expect((await repos.domains.get(id))?.tls).toBe('opportunistic');
      expect(await tlsPolicyOf(setName)).toBe('OPTIONAL');
    } finally {
      await standIn.stop();
      await api.close();
    }
  });
});
