/**
 * Grants that match the code. Every AWS call each function really makes, recorded by middleware on
 * the SDK clients while the local service runs scenarios that reach every function and its failure
 * paths, must be allowed by that function's role in the synthesized template; and every DynamoDB
 * and SES action a role is granted must be used by some scenario (no grant nothing calls).
 * Paths that only a race or a lost answer takes are arranged inside the function's invocation
 * (`arranged`): a request made at a chosen call, an answer lost after AWS took the call.
 * The role table is never restated here: the template is what runs on AWS.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  CreateReceiptRuleCommand,
  DeleteReceiptRuleCommand,
  DescribeReceiptRuleSetCommand,
  SESClient,
  UpdateReceiptRuleCommand,
} from '@aws-sdk/client-ses';
import {
  CreateEmailIdentityCommand,
  GetConfigurationSetCommand,
  GetEmailIdentityCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Template } from 'aws-cdk-lib/assertions';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useClientPlugin } from '../../functions/adapters/aws-clients.js';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoReceivedEmailRepository } from '../../functions/adapters/dynamodb/received-emails.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { S3ReceivedMailStore } from '../../functions/adapters/s3/received-mail.js';
import { OWNER_TAG } from '../../functions/adapters/ses/identities.js';
import { missingObjectStatus, sesAllows } from '../../functions/catalog.js';
import { mimeKey } from '../../functions/emails/attachments.js';
import { sendEmailSchema, toContent } from '../../functions/emails/email.js';
import { fingerprint, hashIdempotencyKey } from '../../functions/emails/idempotency.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { handler as cleanUpAudience } from '../../functions/handlers/clean-up-audience.js';
import { handler as fanOutBroadcast } from '../../functions/handlers/fan-out-broadcast.js';
import { handler as rotateUnsubscribeKeys } from '../../functions/handlers/rotate-unsubscribe-keys.js';
import { parseInput } from '../../functions/http/middleware.js';
import { rawKey } from '../../functions/receiving/model.js';
import { RAW_GRACE_MS } from '../../functions/receiving/sweep.js';
import { logIdOf } from '../../functions/request-logs/model.js';
import { PUBLIC_ROUTES } from '../../functions/routes.js';
import { newEmailId, newUuid, uuidV7Of } from '../../functions/shared/ids.js';
import { systemClock } from '../../functions/shared/ports.js';
import { SignedUnsubscribeLinks } from '../../functions/unsubscribe/links.js';
import { EMITTED_EVENT_TYPES } from '../../functions/webhooks/model.js';
import { unsubscribeKeys } from '../../functions/wiring/unsubscribe-links.js';
import { domainConfigurationSetPrefix } from '../../lib/domain-set-prefixes.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { currentFunction, type RecordedCall, recordAwsCalls, runAs } from '../../local/invocation.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { RULE_PREFIX, RULE_SET } from '../../local/receiving.js';
import { LOCAL_UNSUBSCRIBE_KEYS_SECRET, localUnsubscribeKeys } from '../../local/secrets-extension.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { LOCAL_CONFIGURATION_SET } from '../../local/ses-configuration-sets.js';
import { derivedCalls } from '../support/derived-calls.js';
import { sqsEvent } from '../support/events.js';
import { httpsClient, waitFor } from '../support/https.js';
import {
  allows,
  describeRequirement,
  grantsAction,
  iamActionsOf,
  type Requirement,
  requirementsOf,
} from '../support/iam.js';
import { emailIdCreatedAt } from '../support/ids.js';
import { logicalId, policiesOf, synthStack } from '../support/template.js';
import { startReceiver } from '../support/webhook-receiver.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let service: LocalService;
let recorder: ReturnType<typeof recordAwsCalls>;
let stack: EmailServiceStack;
let template: Template;
/** Domains' own configuration sets: named `<prefix><domain id>`, locally and in the template. */
const domainSets = () => ({
  localPrefix: `${LOCAL_CONFIGURATION_SET}-`,
  templatePrefix: domainConfigurationSetPrefix(stack.stackName),
});

const email = (overrides: Record<string, unknown> = {}) => ({
  from: 'Acme <hello@acme.test>',
  to: 'success@simulator.amazonses.com',
  subject: 'Grants',
  text: 'Hello',
  ...overrides,
});

/**
 * A moment a scenario arranges inside one function's invocation, at its next call of `command`
 * (`matches` its input): `before` runs first (a request racing it), or `loseAnswer` loses the
 * answer after AWS took the call (a timeout: the SDK retries, as on AWS).
 */
interface Arranged {
  functionName: string;
  command: string;
  matches?: (input: Record<string, unknown>) => boolean;
  before?: () => Promise<void>;
  loseAnswer?: boolean;
}
const arranged: Arranged[] = [];

/**
 * Secrets Manager's calls, which no SDK client makes: the Parameters and Secrets extension's
 * GetSecretValue (an HTTP call to the layer on localhost, made with the function's role), and the
 * rotation's calls to Secrets Manager's API (SecretsApi's signed fetch), answered here as Secrets
 * Manager answers them (no local Secrets Manager: its current value is a fresh key set).
 */
let stopRecordingSecrets: () => void = () => undefined;
function recordSecretsCalls(calls: RecordedCall[]): () => void {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const functionName = currentFunction();
    if (functionName && url.hostname === 'localhost' && url.pathname === '/secretsmanager/get')
      calls.push({
        functionName,
        service: 'SecretsManager',
        operation: 'GetSecretValue',
        secretId: url.searchParams.get('secretId') ?? '',
      });
    if (!url.hostname.startsWith('secretsmanager.')) return realFetch(input, init);
    const operation = (new Headers(init?.headers).get('x-amz-target') ?? '').replace(/^secretsmanager\./, '');
    const { SecretId } = JSON.parse(String(init?.body)) as { SecretId: string };
    if (functionName) calls.push({ functionName, service: 'SecretsManager', operation, secretId: SecretId });
    if (operation === 'GetSecretValue') return Response.json({ SecretString: localUnsubscribeKeys() });
    if (operation === 'PutSecretValue') return Response.json({ ARN: SecretId, VersionId: 'v' });
    return Response.json({ message: `no ${operation} here` }, { status: 400 });
  }) as typeof fetch;
  return () => {
    globalThis.fetch = realFetch;
  };
}
let stopArranging: () => void = () => undefined;

beforeAll(async () => {
  ({ stack, template } = synthStack());
  recorder = recordAwsCalls();
  stopRecordingSecrets = recordSecretsCalls(recorder.calls);
  stopArranging = useClientPlugin({
    applyToStack(stack) {
      stack.add(
        (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
          async (args: { input?: Record<string, unknown> }) => {
            const at = arranged.findIndex(
              (a) =>
                a.functionName === currentFunction() &&
                `${a.command}Command` === context.commandName &&
                (a.matches?.(args.input ?? {}) ?? true),
            );
            if (at < 0) return next(args);
            const [moment] = arranged.splice(at, 1) as [Arranged];
            await moment.before?.();
            const result = await next(args);
            if (moment.loseAnswer)
              throw Object.assign(new Error('socket hang up after SES took the call'), {
                name: 'TimeoutError',
              });
            return result;
          },
        { step: 'deserialize', name: 'grantsArranged' },
      );
    },
  });
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 200,
    // Scheduled functions run when a scenario says so (runScheduled), not on a timer.
    domainCheckIntervalMs: 3_600_000,
    sweepIntervalMs: 3_600_000,
    rateLimitPerSecond: 1000,
  });
  const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  const db = createDocumentClient(
    new DynamoDBClient({ endpoint: service.endpoints.dynamodb, region: 'us-east-1', credentials }),
  );
  const repos = createRepositories(service.tableName, db);
  const sqs = new SQSClient({ endpoint: service.endpoints.sqs, region: 'us-east-1', credentials });
  const ses = new SESv2Client({ endpoint: service.endpoints.ses, region: 'us-east-1', credentials });
  // A webhook endpoint for every event from the start, so every function that raises events reads
  // the endpoints (Query) and queues messages (SendMessage); it fails its first attempt (a retry).
  const receiver = await startReceiver([500]);
  try {
    const hook = await api.call('POST', '/webhooks', {
      body: { endpoint: receiver.url, events: [...EMITTED_EVENT_TYPES] },
    });
    expect(hook.status).toBe(201);
    const hookId = hook.json.id as string;

    // Domains. Each read that finds SES's state changed stores it, so wait for SES (read directly,
    // outside any function) to have verified a domain before each function looks at it.
    const sesVerified = (domain: string) =>
      waitFor(
        () => ses.send(new GetEmailIdentityCommand({ EmailIdentity: domain })),
        (r) => r.VerificationStatus === 'SUCCESS',
      );
    const acme = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    expect(acme.status).toBe(201);
    await sesVerified('acme.test');
    expect((await api.call('GET', `/domains/${acme.json.id}`)).json.status).toBe('verified');
    // Its settings: TLS enforced makes its own configuration set (created); then a tracking host
    // changes it (updated). Sends from acme use the set from then on.
    expect((await api.call('PATCH', `/domains/${acme.json.id}`, { body: { tls: 'enforced' } })).status).toBe(
      200,
    );
    expect(
      (
        await api.call('PATCH', `/domains/${acme.json.id}`, {
          body: { open_tracking: true, click_tracking: true, tracking_subdomain: 'links' },
        })
      ).status,
    ).toBe(200);
    expect((await repos.domains.get(acme.json.id))?.configuration_set?.redirect_domain).toBe(
      'links.acme.test',
    );
    // A tracking CNAME published after the change (on AWS, the usual order): each read of the
    // domain then brings its set along. Locally DNS answers "published" at once, so the domain is
    // put back to where it stood before DNS had the record.
    const beforeDns = async (id: string) => {
      const stored = await repos.domains.get(id);
      if (!stored?.configuration_set) throw new Error(`${id} has no configuration set`);
      const { redirect_domain: _, ...set } = stored.configuration_set;
      const records = stored.records.map((r) =>
        r.record === 'Tracking' ? { ...r, status: 'pending' as const } : r,
      );
      // Last looked at before the scheduled check looks for pending tracking records again.
      const checked_at = new Date(Date.now() - 10 * 60_000).toISOString();
      expect(
        await repos.domains.save({ ...stored, records, checked_at, configuration_set: set }, 'existing'),
      ).toBe(true);
    };
    await beforeDns(acme.json.id);
    expect((await api.call('GET', `/domains/${acme.json.id}`)).status).toBe(200);
    await beforeDns(acme.json.id);
    expect((await api.call('POST', `/domains/${acme.json.id}/verify`)).status).toBe(200);
    await beforeDns(acme.json.id);
    // A deleted domain's set whose time has come: the check deletes it.
    await repos.domains.retireConfigurationSet(`${domainSets().localPrefix}dom_retired`, 0);
    await service.runScheduled('check-domains');
    expect(await repos.domains.retiredConfigurationSets(Date.now())).toEqual([]);
    expect((await repos.domains.get(acme.json.id))?.configuration_set?.redirect_domain).toBe(
      'links.acme.test',
    );
    // A domain added with TLS enforced has its set from the start.
    const strict = await api.call('POST', '/domains', { body: { name: 'strict.test', tls: 'enforced' } });
    expect(strict.status).toBe(201);
    // One whose SES answers are lost after SES made its set and the set's event destination: the
    // SDK's retries meet both, and update them.
    arranged.push(
      { functionName: 'create-domain', command: 'CreateConfigurationSet', loseAnswer: true },
      { functionName: 'create-domain', command: 'CreateConfigurationSetEventDestination', loseAnswer: true },
    );
    const lostAnswers = await api.call('POST', '/domains', { body: { name: 'lost.test', tls: 'enforced' } });
    expect(lostAnswers.status, JSON.stringify(lostAnswers.json)).toBe(201);
    expect(arranged).toEqual([]);
    // The hourly check of strict.test loses its race to a PATCH of its TLS (made while the check
    // reads SES): the check puts the set it read, its store is refused, and it puts back the set
    // as stored, which it reads (GetItem).
    const strictStored = await repos.domains.get(strict.json.id);
    if (!strictStored?.configuration_set) throw new Error('strict.test has no configuration set');
    const strictSet = strictStored.configuration_set.name;
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
    expect(await repos.domains.save({ ...strictStored, checked_at: hoursAgo }, 'existing')).toBe(true);
    arranged.push({
      functionName: 'check-domains',
      command: 'GetEmailIdentity',
      matches: (input) => input.EmailIdentity === 'strict.test',
      before: async () => {
        const patched = await api.call('PATCH', `/domains/${strict.json.id}`, {
          body: { tls: 'opportunistic' },
        });
        expect(patched.status).toBe(200);
      },
    });
    await service.runScheduled('check-domains');
    expect(arranged).toEqual([]);
    const tlsPolicy = async () =>
      (await ses.send(new GetConfigurationSetCommand({ ConfigurationSetName: strictSet }))).DeliveryOptions
        ?.TlsPolicy;
    expect(await tlsPolicy()).toBe('OPTIONAL');
    const shop = await api.call('POST', '/domains', { body: { domain: 'shop.test' } });
    await sesVerified('shop.test');
    expect((await api.call('POST', `/domains/${shop.json.id}/verify`)).json.status).toBe('verified');
    expect((await api.call('DELETE', `/domains/${shop.json.id}`)).status).toBe(200);
    const later = await api.call('POST', '/domains', { body: { domain: 'later.test' } });
    await sesVerified('later.test');
    await service.runScheduled('check-domains');
    expect(
      (await api.call('GET', '/domains')).json.data.find((d: { id: string }) => d.id === later.json.id)
        .status,
    ).toBe('verified');
    // One SES refuses (an identity someone else made): its name is given back.
    await ses.send(
      new CreateEmailIdentityCommand({
        EmailIdentity: 'theirs.test',
        Tags: [{ Key: OWNER_TAG, Value: 'another-stack' }],
      }),
    );
    expect((await api.call('POST', '/domains', { body: { domain: 'theirs.test' } })).status).toBe(409);

    // Templates: created (an alias taken, then refused to another), listed, read by alias, changed
    // (a new alias frees the old one), published, duplicated, sent from alone and in a batch, deleted.
    const tpl = await api.call('POST', '/templates', {
      body: {
        name: 'Grants',
        alias: 'grants-welcome',
        subject: 'Hi {{{NAME}}}',
        html: '<p>Hi {{{NAME}}}</p>',
        variables: [{ key: 'NAME', type: 'string', fallback_value: 'there' }],
      },
    });
    expect(tpl.status).toBe(201);
    expect(
      (await api.call('POST', '/templates', { body: { name: 'x', alias: 'grants-welcome', html: 'x' } }))
        .status,
    ).toBe(409);
    expect((await api.call('GET', '/templates')).status).toBe(200);
    expect((await api.call('GET', '/templates/grants-welcome')).status).toBe(200);
    expect(
      (await api.call('PATCH', `/templates/${tpl.json.id}`, { body: { alias: 'grants-hello' } })).status,
    ).toBe(200);
    expect((await api.call('POST', '/templates/grants-hello/publish')).status).toBe(200);
    const copy = await api.call('POST', `/templates/${tpl.json.id}/duplicate`);
    expect(copy.status).toBe(200);
    const byTemplate = {
      from: 'Acme <hello@acme.test>',
      to: 'success@simulator.amazonses.com',
      template: { id: 'grants-hello', variables: { NAME: 'Ann' } },
    };
    expect((await api.call('POST', '/emails', { body: byTemplate })).status).toBe(200);
    expect((await api.call('POST', '/emails/batch', { body: [byTemplate, byTemplate] })).status).toBe(200);
    expect((await api.call('DELETE', `/templates/${copy.json.id}`)).status).toBe(200);

    // API keys.
    const key = await api.call('POST', '/api-keys', { body: { name: 'grants' } });
    await api.call('GET', '/api-keys');
    await api.call('PATCH', `/api-keys/${key.json.id}`, { body: { name: 'grants, renamed' } });
    await api.call('DELETE', `/api-keys/${key.json.id}`);
    expect((await api.call('PATCH', `/api-keys/${key.json.id}`, { body: { name: 'gone' } })).status).toBe(
      404,
    );

    // Batches: strict, permissive with a refused sender, an idempotent one sent twice.
    const batch = [
      { from: 'Acme <hello@acme.test>', to: 'success@simulator.amazonses.com', subject: 'b1', text: 'x' },
      { from: 'Acme <hello@acme.test>', to: 'bounce@simulator.amazonses.com', subject: 'b2', text: 'x' },
    ];
    expect((await api.call('POST', '/emails/batch', { body: batch })).status).toBe(200);
    expect(
      (
        await api.call('POST', '/emails/batch', {
          body: [...batch, { ...batch[0], from: 'x@nowhere.test' }],
          headers: { 'x-batch-validation': 'permissive' },
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++)
      expect(
        (
          await api.call('POST', '/emails/batch', {
            body: batch,
            headers: { 'Idempotency-Key': 'grants-batch' },
          })
        ).status,
      ).toBe(200);

    // Emails: plain sends to each simulator outcome, with and without an Idempotency-Key (new,
    // replay, other body, a refused send that gives its key back), listing, reading.
    for (const to of ['success', 'bounce', 'complaint', 'suppressionlist'])
      expect(
        (await api.call('POST', '/emails', { body: email({ to: `${to}@simulator.amazonses.com` }) })).status,
      ).toBe(200);
    const idem = { headers: { 'idempotency-key': 'grants-1' } };
    // Email metrics: by domain (every domain read, for its id) and filtered by one (read by id).
    const metrics = await api.call('GET', '/emails/metrics?dimensions=period,domain&granularity=hourly');
    expect(metrics.status).toBe(200);
    expect((await api.call('GET', `/emails/metrics?domain_id=${acme.json.id}`)).status).toBe(200);
    // By broadcast: the counts kept by broadcast (Query) and the broadcasts' names (BatchGetItem: a
    // broadcast_id that is no broadcast is a 400, not a 500 refused by IAM).
    expect((await api.call('GET', '/emails/metrics?dimensions=period,broadcast')).status).toBe(200);
    expect(
      (await api.call('GET', '/emails/metrics?broadcast_id=019a0000-0000-7000-8000-000000000000')).status,
    ).toBe(400);
    // Usage: the stored SES limits (GetItem), the counters and the domains (Query); never SES.
    expect((await api.call('GET', '/usage')).status).toBe(200);
    const first = await api.call('POST', '/emails', { body: email(), ...idem });
    expect((await api.call('POST', '/emails', { body: email(), ...idem })).json.id).toBe(first.json.id);
    expect((await api.call('POST', '/emails', { body: email({ subject: 'other' }), ...idem })).status).toBe(
      409,
    );
    const refused = await api.call('POST', '/emails', {
      body: email({ from: 'a@nowhere.test' }),
      headers: { 'idempotency-key': 'grants-2' },
    });
    expect(refused.status).toBe(400);
    // A request that died holding its key, after storing its email: a retry resumes it.
    const devKey = (await repos.apiKeys.list({ limit: 100, offset: 0 })).data.find(
      (k) => k.name === 'local development',
    );
    const diedId = newEmailId();
    const body = email({ subject: 'died' });
    await repos.idempotency.begin(
      devKey?.id ?? '',
      hashIdempotencyKey('grants-died'),
      fingerprint(body),
      diedId,
      Date.now() - 60_000,
    );
    await repos.emails.create({
      id: diedId,
      created_at: new Date().toISOString(),
      content: toContent(parseInput(sendEmailSchema, body)),
    });
    const resumed = await api.call('POST', '/emails', {
      body,
      headers: { 'idempotency-key': 'grants-died' },
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json.id).toBe(diedId);
    // A batch request that died after storing its first email, resumed; a refused one gives its key back.
    const batchBody = [email({ subject: 'died 1' }), email({ subject: 'died 2' })];
    const diedBatch = newEmailId();
    await repos.idempotency.begin(
      devKey?.id ?? '',
      hashIdempotencyKey('grants-died-batch'),
      fingerprint({ batch: batchBody, mode: 'strict' }),
      diedBatch,
      Date.now() - 60_000,
    );
    await repos.emails.create({
      id: diedBatch,
      created_at: new Date().toISOString(),
      content: toContent(parseInput(sendEmailSchema, batchBody[0])),
    });
    const resumedBatch = await api.call('POST', '/emails/batch', {
      body: batchBody,
      headers: { 'idempotency-key': 'grants-died-batch' },
    });
    expect(resumedBatch.status).toBe(200);
    expect(resumedBatch.json.data[0].id).toBe(diedBatch);
    const refusedBatch = await api.call('POST', '/emails/batch', {
      body: [email({ from: 'a@nowhere.test' })],
      headers: { 'idempotency-key': 'grants-batch-refused' },
    });
    expect(refusedBatch.status).toBe(400);
    await api.call('GET', '/emails?limit=5');
    await api.call('GET', '/emails?limit=5&status=queued');
    await api.call('GET', `/emails/${first.json.id}`);
    await api.call('GET', '/no-such-route');

    // Attachments: content and a path (served on this machine; fetched once by the consumer,
    // then kept), a body large enough for the content store, each read back; the attachment
    // routes presign their links; a job too large to travel whole is read back by the consumer.
    const files = createServer((_req, res) => res.writeHead(200).end('report'));
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    try {
      const filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
      const withFiles = await api.call('POST', '/emails', {
        body: email({
          subject: 'Attachments',
          attachments: [
            { filename: 'a.txt', content: 'aGVsbG8=' },
            { filename: 'report.txt', path: `${filesUrl}/report.txt` },
          ],
        }),
      });
      const large = await api.call('POST', '/emails', {
        body: email({ subject: 'Large', html: 'x'.repeat(300 * 1024) }),
      });
      const medium = await api.call('POST', '/emails', {
        body: email({ subject: 'Medium', html: 'x'.repeat(100 * 1024) }),
      });
      for (const sent of [withFiles, large, medium]) {
        expect(sent.status).toBe(200);
        await waitFor(
          () => api.call('GET', `/emails/${sent.json.id}`),
          (r) => r.json?.status === 'delivered',
        );
      }
      // Sharing: a link to the large email, opened without a key (its bodies read from the content
      // store; the link's first view of a minute is refused, read, then started), and a token that
      // opens nothing (read once).
      const shared = await api.call('POST', `/emails/${large.json.id}/share`, { body: { expires_in: '1h' } });
      expect(shared.status).toBe(200);
      expect((await api.call('GET', `/..${new URL(shared.json.url).pathname}`, { key: null })).status).toBe(
        200,
      );
      expect((await api.call('GET', `/../share/${'A'.repeat(43)}`, { key: null })).status).toBe(404);
      const listed = await api.call('GET', `/emails/${withFiles.json.id}/attachments`);
      expect(listed.json.data.map((a: { size: number }) => a.size)).toEqual([5, 6]);
      const one = await api.call('GET', `/emails/${withFiles.json.id}/attachments/${listed.json.data[1].id}`);
      expect(one.status).toBe(200);
    } finally {
      files.close();
    }

    // Receiving's routes: an email as the parser leaves it (item, bodies, one attachment), listed,
    // read (its bodies and inline image read, its raw message's link signed), and its attachments.
    {
      const s3 = new S3Client({
        endpoint: service.endpoints.s3,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials,
      });
      const id = uuidV7Of(Date.now(), Buffer.alloc(16, 7));
      const image = {
        id: uuidV7Of(Date.now(), Buffer.alloc(16, 8)),
        filename: 'logo.png',
        content_type: 'image/png',
        content_id: '<logo@grants.test>',
        content_disposition: 'inline' as const,
        size: 4,
      };
      const mail = new S3ReceivedMailStore(s3, service.contentBucket);
      await mail.putParsed(id, { html: '<img src="cid:logo@grants.test">', text: null, headers: {} });
      await mail.putAttachment(id, image.id, new Uint8Array([1, 2, 3, 4]), 'image/png');
      await new DynamoReceivedEmailRepository(db, service.tableName).store({
        id,
        ses_message_id: 'grants-received-1',
        created_at: new Date().toISOString(),
        from: 'someone@example.com',
        to: ['in@acme.com'],
        cc: [],
        bcc: [],
        reply_to: [],
        received_for: ['in@acme.com'],
        subject: 'Received',
        message_id: '<received-1@example.com>',
        in_reply_to: null,
        references: [],
        attachments: [image],
        authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
        spam: 'pass',
        virus: 'pass',
        size: 100,
        notified: true,
      });
      s3.destroy();
      for (const path of [
        '/emails/receiving',
        `/emails/receiving/${id}`,
        `/emails/receiving/${id}/attachments`,
        `/emails/receiving/${id}/attachments/${image.id}`,
      ])
        expect((await api.call('GET', path)).status, path).toBe(200);
    }

    // Receiving through the local inbound SMTP endpoint, as SES receives: a domain created with
    // receiving, another enabled and then deleted (each queues a rule sync for the one writer);
    // a message the writer's rule lets in, parsed and stored by receive-email (and published); one
    // whose invocation fails for good (its record goes to the failure destination, where the
    // sweep finds it); a raw object whose invocation never came, found by the sweep's hourly look.
    {
      const sesV1 = new SESClient({ endpoint: service.endpoints.ses, region: 'us-east-1', credentials });
      const s3 = new S3Client({
        endpoint: service.endpoints.s3,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials,
      });
      const smtp = nodemailer.createTransport({
        host: service.inboundSmtp.host,
        port: service.inboundSmtp.port,
        secure: false,
      });
      try {
        /** Our rules in our set, by name (SES's view, read outside any function). */
        const ourRules = async () =>
          Object.fromEntries(
            (
              (await sesV1.send(new DescribeReceiptRuleSetCommand({ RuleSetName: RULE_SET }))).Rules ?? []
            ).map((r) => [r.Name, [...(r.Recipients ?? [])].sort()]),
          );
        const rulesBecome = async (wanted: Record<string, string[]>) =>
          expect(
            await waitFor(ourRules, (rules) => JSON.stringify(rules) === JSON.stringify(wanted), 20_000),
          ).toEqual(wanted);
        const inbox = await api.call('POST', '/domains', {
          body: { name: 'inbox.test', capabilities: { receiving: 'enabled' } },
        });
        expect(inbox.status).toBe(201);
        await rulesBecome({ [`${RULE_PREFIX}-receive-1`]: ['inbox.test'] });
        const received = async (subject: string) =>
          expect(
            (
              await waitFor(
                () => api.call('GET', '/emails/receiving?limit=20'),
                (r) => r.json.data?.some((e: { subject: string }) => e.subject === subject),
              )
            ).json.data.map((e: { subject: string }) => e.subject),
          ).toContain(subject);
        const message = (subject: string) => ({
          from: 'Sender <sender@outside.test>',
          to: 'hello@inbox.test',
          subject,
          text: 'Hello',
          attachments: [{ filename: 'a.txt', content: 'hello' }],
        });
        expect((await smtp.sendMail(message('Grants inbound'))).response).toMatch(/^250 /);
        await received('Grants inbound');
        // receive-email fails at each of Lambda's three attempts (its read of the raw message).
        for (let i = 0; i < 3; i++)
          arranged.push({
            functionName: 'receive-email',
            command: 'GetObject',
            before: async () => {
              throw Object.assign(new Error('S3 is unavailable'), { name: 'ServiceUnavailable' });
            },
          });
        expect((await smtp.sendMail(message('Grants failed'))).response).toMatch(/^250 /);
        await service.idle();
        expect(arranged).toEqual([]);
        await waitFor(
          () =>
            sqs.send(
              new GetQueueAttributesCommand({
                QueueUrl: service.queues.receivedFailures,
                AttributeNames: ['ApproximateNumberOfMessages'],
              }),
            ),
          (r) => r.Attributes?.ApproximateNumberOfMessages === '1',
        );
        await service.runScheduled('sweep-received');
        await received('Grants failed');
        // A raw message SES wrote whose invocation never came, looked at by the sweep's run in the
        // first minutes of an hour (sweep.ts): the sweep's clock reads such a time, at least 16
        // minutes on, so the object is past its grace.
        await s3.send(
          new PutObjectCommand({
            Bucket: service.contentBucket,
            Key: rawKey('grantsrawonly000000000000000000000000000'),
            Body: [
              'Received: from mail.outside.test by inbound-smtp.us-east-1.amazonaws.com with SMTP id grantsrawonly for late@inbox.test;',
              '  Sat, 28 Nov 2026 09:00:00 +0000 (UTC)',
              'From: sender@outside.test',
              'To: late@inbox.test',
              'Subject: Grants swept',
              '',
              'Hello',
              '',
            ].join('\r\n'),
          }),
        );
        const hour = 3_600_000;
        let shifted = Math.ceil(Date.now() / hour) * hour + 60_000;
        if (shifted - Date.now() < RAW_GRACE_MS + 60_000) shifted += hour;
        const offset = shifted - Date.now();
        const clock = vi.spyOn(systemClock, 'now');
        clock.mockImplementation(
          () => new Date(Date.now() + (currentFunction() === 'sweep-received' ? offset : 0)),
        );
        try {
          await service.runScheduled('sweep-received');
        } finally {
          clock.mockRestore();
        }
        await received('Grants swept');

        // The writer's rules follow the domains: a domain enabled (after our rule was deleted by
        // hand: made again), then deleted while a rule of ours holds a domain that no longer
        // receives (as one left from when more than one rule's worth of domains received): the
        // first rule is updated and the emptied one deleted.
        const side = await api.call('POST', '/domains', { body: { name: 'side.test' } });
        expect(side.status).toBe(201);
        await sesV1.send(
          new DeleteReceiptRuleCommand({ RuleSetName: RULE_SET, RuleName: `${RULE_PREFIX}-receive-1` }),
        );
        expect(
          (
            await api.call('PATCH', `/domains/${side.json.id}`, {
              body: { capabilities: { receiving: 'enabled' } },
            })
          ).status,
        ).toBe(200);
        await rulesBecome({ [`${RULE_PREFIX}-receive-1`]: ['inbox.test', 'side.test'] });
        await sesV1.send(
          new CreateReceiptRuleCommand({
            RuleSetName: RULE_SET,
            After: `${RULE_PREFIX}-receive-1`,
            Rule: { Name: `${RULE_PREFIX}-receive-2`, Enabled: true, Recipients: ['gone.test'] },
          }),
        );
        expect((await api.call('DELETE', `/domains/${side.json.id}`)).status).toBe(200);
        await rulesBecome({ [`${RULE_PREFIX}-receive-1`]: ['inbox.test'] });
        // A deploy (the custom resource's Update: each rule written again, a sync asked for), once
        // the writer is done; then the stack's deletion (Delete: our rule and our set removed).
        const rulesQueued = async () => {
          const { Attributes } = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: service.queues.receiptRules,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
            }),
          );
          return (
            Number(Attributes?.ApproximateNumberOfMessages) +
            Number(Attributes?.ApproximateNumberOfMessagesNotVisible)
          );
        };
        // A rule whose actions are not the stack's (an older receive-email's, say): the Update
        // writes it again itself, with the time it has.
        const ruleOne = async () =>
          (await sesV1.send(new DescribeReceiptRuleSetCommand({ RuleSetName: RULE_SET }))).Rules?.find(
            (rule) => rule.Name === `${RULE_PREFIX}-receive-1`,
          );
        const Rule = await ruleOne();
        await sesV1.send(
          new UpdateReceiptRuleCommand({
            RuleSetName: RULE_SET,
            Rule: { ...Rule, Name: `${RULE_PREFIX}-receive-1`, Actions: Rule?.Actions?.slice(0, 1) },
          }),
        );
        await service.receivingResource('Update');
        expect(await waitFor(rulesQueued, (n) => n === 0, 20_000)).toBe(0);
        expect((await ruleOne())?.Actions).toHaveLength(Rule?.Actions?.length ?? 0);
        await service.receivingResource('Delete');
        await expect(
          sesV1.send(new DescribeReceiptRuleSetCommand({ RuleSetName: RULE_SET })),
        ).rejects.toMatchObject({ name: 'RuleSetDoesNotExistException' });
      } finally {
        smtp.close();
        sesV1.destroy();
        s3.destroy();
      }
    }

    // Suppressions: bounce@ and complaint@ joined the list (their events; a complaint after the
    // delivery reads the email's recipients); a send with one suppressed recipient and one with
    // nothing left to send (the consumer's batch read, and its suppressed events); by hand, again
    // (the entry that stands), listed, by id and by address, in batches; removing one takes it
    // off SES's list too (there, and not there).
    await service.idle();
    await waitFor(
      () => api.call('GET', '/suppressions/complaint@simulator.amazonses.com'),
      (r) => r.status === 200,
    );
    await waitFor(
      () => api.call('GET', '/suppressions/bounce@simulator.amazonses.com'),
      (r) => r.status === 200,
    );
    const partly = await api.call('POST', '/emails', {
      body: email({ to: ['bounce@simulator.amazonses.com', 'success@simulator.amazonses.com'] }),
    });
    const wholly = await api.call('POST', '/emails', {
      body: email({ to: 'bounce@simulator.amazonses.com' }),
    });
    await service.idle();
    expect((await repos.emails.getState(wholly.json.id))?.status).toBe('bounced');
    expect((await repos.emails.getState(partly.json.id))?.tally?.lost).toBe(1);
    // A broadcast's email through its lane (issue 41), as the fan-out makes it: stored with
    // createMany, its job on the lane. The lane consumer reads the broadcast's status (GetItem), the
    // suppression list (BatchGetItem), claims and records it (UpdateItem), reads the endpoints
    // (Query) for email.sent; the account's limits, kept 2 s locally, are due again for it to read.
    const laneBroadcastId = newUuid();
    await db.send(
      new PutCommand({
        TableName: service.tableName,
        Item: {
          pk: 'BROADCASTS',
          sk: `BROADCAST#${laneBroadcastId}`,
          id: laneBroadcastId,
          status: 'sending',
        },
      }),
    );
    const laneJob = {
      id: newEmailId(),
      content: { ...toContent(sendEmailSchema.parse(email())), broadcast_id: laneBroadcastId },
    };
    await repos.emails.createMany(
      [{ id: laneJob.id, created_at: new Date().toISOString(), content: laneJob.content }],
      {
        mayExist: true,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, service.timings.accountRefreshMs + 500));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: service.queues.broadcastLane,
        MessageBody: toQueueMessage(laneJob),
      }),
    );
    await waitFor(
      () => repos.emails.getState(laneJob.id),
      (state) => state?.sent_at !== undefined,
      20_000,
    );
    const manual = await api.call('POST', '/suppressions', { body: { email: 'someone@example.com' } });
    expect(manual.status).toBe(201);
    expect((await api.call('POST', '/suppressions', { body: { email: 'someone@example.com' } })).status).toBe(
      200,
    );
    await api.call('GET', '/suppressions?limit=5');
    await api.call('GET', '/suppressions?origin=bounce');
    expect((await api.call('GET', `/suppressions/${manual.json.id}`)).status).toBe(200);
    await api.call('POST', '/suppressions/batch/add', {
      body: { emails: ['x1@example.com', 'someone@example.com'] },
    });
    await api.call('POST', '/suppressions/batch/remove', { body: { ids: [manual.json.id] } });
    const bounced = await api.call('GET', '/suppressions/bounce@simulator.amazonses.com');
    expect((await api.call('DELETE', `/suppressions/${bounced.json.id}`)).status).toBe(200);
    expect((await api.call('DELETE', '/suppressions/complaint@simulator.amazonses.com')).status).toBe(200);

    // The consumer: a duplicate delivery of a job it already sent (its claim is refused).
    await service.idle();
    const job = { id: first.json.id, content: toContent(parseInput(sendEmailSchema, email())) };
    await sqs.send(
      new SendMessageCommand({ QueueUrl: service.queues.send, MessageBody: JSON.stringify(job) }),
    );
    await service.idle();

    // The sweeper: an email stored long enough ago and never queued, a dead letter, an attempt
    // whose outcome stayed unknown.
    const strandedAt = Date.now() - service.timings.requeueAfterMs - 60_000;
    const stranded = emailIdCreatedAt(strandedAt);
    await repos.emails.create({
      id: stranded,
      created_at: new Date(strandedAt).toISOString(),
      content: job.content,
    });
    const deadId = emailIdCreatedAt(Date.now() - 1000);
    await repos.emails.create({ id: deadId, created_at: new Date().toISOString(), content: job.content });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: service.queues.sendDeadLetters,
        MessageBody: JSON.stringify({ id: deadId, content: job.content }),
      }),
    );
    const unknown = emailIdCreatedAt(strandedAt);
    await repos.emails.create({
      id: unknown,
      created_at: new Date(strandedAt).toISOString(),
      content: job.content,
    });
    await repos.emails.claim(unknown, Date.now() - service.timings.unknownOutcomeAfterMs - 1000);
    await service.runScheduled('sweep-emails');
    // The metrics' roll-up of the hours the scenarios so far counted in.
    await service.runScheduled('roll-up-metrics');
    await service.idle();
    expect((await repos.emails.getState(stranded))?.status).not.toBe('queued');
    expect((await repos.emails.getState(deadId))?.status).toBe('failed');
    expect((await repos.emails.getState(unknown))?.status).toBe('failed');

    // Scheduling (after the sweeper's scenario: a sweep run moves its progress past old ids): one due soon (queued by the send path, held by the queue), one in a batch, one
    // moved to soon (queued by the reschedule), one canceled; one whose key is revoked before it
    // is due (the consumer reads the key); a message that comes before its email's time (put back,
    // delayed); one left to the scheduler (the due index, its mark).
    const soonAt = () => new Date(Date.now() + 1500).toISOString();
    const soon = await api.call('POST', '/emails', {
      body: email({ subject: 'Soon', scheduled_at: soonAt() }),
    });
    expect(soon.json.last_event).toBe('scheduled');
    const batched = await api.call('POST', '/emails/batch', {
      body: [email({ subject: 'Batched', scheduled_at: 'in 10 days' })],
    });
    const moved = await api.call('POST', '/emails', {
      body: email({ subject: 'Moved', scheduled_at: 'in 10 days' }),
    });
    expect(
      (await api.call('PATCH', `/emails/${moved.json.id}`, { body: { scheduled_at: soonAt() } })).status,
    ).toBe(200);
    expect((await api.call('POST', `/emails/${batched.json.data[0].id}/cancel`)).status).toBe(200);
    const keyed = await api.call('POST', '/api-keys', { body: { name: 'scheduler' } });
    const keyedApi = httpsClient(service.baseUrl, service.certificate, keyed.json.token);
    const orphan = await keyedApi.call('POST', '/emails', {
      body: email({ subject: 'Orphan', scheduled_at: soonAt() }),
    });
    await api.call('DELETE', `/api-keys/${keyed.json.id}`);
    for (const [sent, status] of [
      [soon, 'delivered'],
      [moved, 'delivered'],
      [orphan, 'failed'],
    ] as const)
      expect(
        (
          await waitFor(
            () => api.call('GET', `/emails/${sent.json.id}`),
            (r) => r.json?.status === status,
          )
        ).json.status,
      ).toBe(status);
    const notDue = newEmailId();
    await repos.emails.create({
      id: notDue,
      created_at: new Date().toISOString(),
      content: toContent(parseInput(sendEmailSchema, email())),
      schedule: {
        at: new Date(Date.now() + 300_000).toISOString(),
        key_id: devKey?.id ?? '',
        dispatched: false,
      },
    });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: service.queues.send,
        MessageBody: JSON.stringify({ id: notDue, content: null, key_id: devKey?.id }),
      }),
    );
    await service.idle();
    const left = newEmailId();
    await repos.emails.create({
      id: left,
      created_at: new Date().toISOString(),
      content: toContent(parseInput(sendEmailSchema, email())),
      schedule: { at: soonAt(), key_id: devKey?.id ?? '', dispatched: false },
    });
    await service.runScheduled('dispatch-scheduled');
    expect((await repos.emails.getState(left))?.dispatched).toBeDefined();
    expect(
      (
        await waitFor(
          () => repos.emails.getState(left),
          (state) => state?.status === 'delivered',
        )
      )?.status,
    ).toBe('delivered');

    // Webhooks: the message whose first attempt failed was retried (hidden until due) and
    // succeeded; listed, read, its attempts, replayed; the endpoint listed, read, rotated, changed;
    // a message for it while it is disabled is dropped (recorded failed); then it is deleted.
    const retried = await waitFor(
      () => api.call('GET', `/webhooks/${hookId}/events?limit=100`),
      (r) =>
        r.json.data?.some(
          (m: { attempts: number; status: string }) => m.attempts === 2 && m.status === 'success',
        ),
      20_000,
    );
    const message = retried.json.data.find((m: { attempts: number }) => m.attempts === 2);
    expect(message).toBeDefined();
    await api.call('GET', '/webhooks');
    expect((await api.call('GET', `/webhooks/${hookId}`)).status).toBe(200);
    expect((await api.call('GET', `/webhooks/${hookId}/events/${message.id}`)).status).toBe(200);
    expect(
      (await api.call('GET', `/webhooks/${hookId}/events/${message.id}/attempts`)).json.data,
    ).toHaveLength(2);
    expect((await api.call('POST', `/webhooks/${hookId}/events/${message.id}/replay`)).status).toBe(200);
    await waitFor(
      () => api.call('GET', `/webhooks/${hookId}/events/${message.id}`),
      (r) => r.json.attempts === 3,
    );
    // A retry due in more than 15 minutes is parked in the table (the delivery function's PutItem);
    // once due, requeue-webhook-retries puts it back on the queue (Query, SendMessage) and takes it out
    // (BatchWriteItem), and it is delivered.
    const shown = (await api.call('GET', `/webhooks/${hookId}/events/${message.id}`)).json;
    receiver.failNext(503);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: service.queues.webhooks,
        MessageBody: JSON.stringify({
          message_id: shown.id,
          webhook_id: hookId,
          type: shown.type,
          created_at: shown.created_at,
          body: JSON.stringify(shown.payload),
          attempts_made: 3,
        }),
      }),
    );
    const parkedRetries = async () => {
      const found = [];
      for await (const page of repos.webhookRetries.due('9999-12-31T00:00:00.000Z', 100)) found.push(...page);
      return found;
    };
    const [parked] = await waitFor(parkedRetries, (found) => found.length === 1);
    if (!parked?.delivery) throw new Error('the failed attempt parked no retry');
    expect(parked.delivery.attempts_made).toBe(4);
    // As if its 2 hours had passed.
    await repos.webhookRetries.remove([parked]);
    await repos.webhookRetries.park({
      ...parked,
      delivery: parked.delivery,
      due_at: new Date(Date.now() - 1000).toISOString(),
    });
    await service.runScheduled('requeue-webhook-retries');
    expect(await parkedRetries()).toEqual([]);
    await waitFor(
      () => api.call('GET', `/webhooks/${hookId}/events/${message.id}`),
      (r) => r.json.status === 'success' && r.json.attempts === 5,
    );
    expect((await api.call('POST', `/webhooks/${hookId}/signing-secret/rotate`)).status).toBe(200);
    // A paused endpoint (its breaker opened, as after failures in a row): the delivery function holds
    // its message (BatchWriteItem) and marks the endpoint (UpdateItem); disabled meanwhile, the
    // requeue function marks the held message failed (PutItem) and clears the mark (UpdateItem).
    expect(
      await repos.webhooks.pause(
        hookId,
        new Date(Date.now() + 60_000).toISOString(),
        1,
        new Date().toISOString(),
      ),
    ).toBe(true);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: service.queues.webhooks,
        MessageBody: JSON.stringify({
          message_id: shown.id,
          webhook_id: hookId,
          type: shown.type,
          created_at: shown.created_at,
          body: JSON.stringify(shown.payload),
        }),
      }),
    );
    expect(
      (
        await waitFor(
          () => repos.webhooks.get(hookId),
          (w) => !!w?.held_at,
        )
      )?.held_at,
    ).toBeDefined();
    expect((await api.call('PATCH', `/webhooks/${hookId}`, { body: { status: 'disabled' } })).status).toBe(
      200,
    );
    await service.runScheduled('requeue-webhook-retries');
    expect((await repos.webhooks.get(hookId))?.held_at).toBeUndefined();
    const full = (await api.call('GET', `/webhooks/${hookId}/events/${message.id}`)).json;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: service.queues.webhooks,
        MessageBody: JSON.stringify({
          message_id: full.id,
          webhook_id: hookId,
          type: full.type,
          created_at: full.created_at,
          body: JSON.stringify(full.payload),
        }),
      }),
    );
    await waitFor(
      () => api.call('GET', `/webhooks/${hookId}/events/${message.id}`),
      (r) => r.json.status === 'failed',
    );
    expect((await api.call('DELETE', `/webhooks/${hookId}`)).status).toBe(200);

    // The audience: every route of contacts, segments (and the audiences mapped onto them), topics,
    // contact properties and imports, each with the write it exists for, then the deletes whose
    // clean-up and the import's steps run on their queues (service.idle waits for both).
    const made = async (method: string, path: string, body?: unknown) => {
      const answer = await api.call(method, path, body === undefined ? {} : { body });
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.json)}`).toBeLessThan(300);
      return answer.json;
    };
    const property = await made('POST', '/contact-properties', { key: 'plan', type: 'string' });
    await made('GET', '/contact-properties');
    await made('GET', `/contact-properties/${property.id}`);
    await made('PATCH', `/contact-properties/${property.id}`, { fallback_value: 'free' });
    const segment = await made('POST', '/segments', { name: 'Grants' });
    await made('GET', '/segments');
    await made('GET', `/segments/${segment.id}`);
    await made('PATCH', `/segments/${segment.id}`, { name: 'Grants, renamed' });
    const audience = await made('POST', '/audiences', { name: 'Grants audience' });
    await made('GET', '/audiences');
    await made('GET', `/audiences/${audience.id}`);
    const topic = await made('POST', '/topics', { name: 'Grants', default_subscription: 'opt_in' });
    await made('GET', '/topics');
    await made('GET', `/topics/${topic.id}`);
    await made('PATCH', `/topics/${topic.id}`, { name: 'Grants, renamed' });
    const contact = await made('POST', '/contacts', {
      email: 'Grants+one@example.test',
      properties: { plan: 'pro' },
      segments: [segment.id],
      topics: [{ id: topic.id, subscription: 'opt_out' }],
    });
    await made('GET', '/contacts');
    await made('GET', `/contacts?segment_id=${segment.id}`);
    await made('GET', '/contacts/grants+one@example.test');
    await made('PATCH', `/contacts/${contact.id}`, { first_name: 'Grants' });
    // An address change: one TransactWriteItems (the old item's Delete, the new one's Put, the id item's).
    await made('PATCH', `/contacts/${contact.id}`, { email: 'grants+moved@example.test' });
    await made('PATCH', `/contacts/${contact.id}`, { email: 'grants+one@example.test' });
    await made('GET', `/contacts/${contact.id}/segments`);
    await made('POST', `/contacts/${contact.id}/segments/${audience.id}`);
    await made('DELETE', `/contacts/${contact.id}/segments/${audience.id}`);
    await made('GET', `/segments/${segment.id}/contacts`);
    await made('GET', `/contacts/${contact.id}/topics`);
    await made('PATCH', `/contacts/${contact.id}/topics`, [{ id: topic.id, subscription: 'opt_in' }]);
    await made('POST', `/audiences/${audience.id}/contacts`, { email: 'grants-two@example.test' });
    await made('GET', `/audiences/${audience.id}/contacts`);
    await made('GET', `/audiences/${audience.id}/contacts/grants-two@example.test`);
    await made('PATCH', `/audiences/${audience.id}/contacts/grants-two@example.test`, { unsubscribed: true });
    await made('PATCH', `/audiences/${audience.id}/contacts/grants-two@example.test`, {
      email: 'grants-two-moved@example.test',
    });
    await made('DELETE', `/audiences/${audience.id}/contacts/grants-two-moved@example.test`);
    const form = new FormData();
    form.append(
      'file',
      new Blob(['email,plan\ngrants-three@example.test,pro\nnot an address,free\n'], { type: 'text/csv' }),
    );
    // A property column: the import reads the defined properties (Query) to check it.
    form.append('column_map', JSON.stringify({ email: 'email', properties: { plan: { column: 'plan' } } }));
    form.append('segments', JSON.stringify([{ id: segment.id }]));
    // A multipart body as the SDK sends it (the client sends strings as they are).
    const multipart = new Request('https://localhost/', { method: 'POST', body: form });
    const imported = await api.call('POST', '/contacts/imports', {
      body: await multipart.text(),
      headers: { 'content-type': multipart.headers.get('content-type') as string },
    });
    expect(imported.status, JSON.stringify(imported.json)).toBeLessThan(300);
    await service.idle();
    await made('GET', '/contacts/imports');
    await made('GET', `/contacts/imports/${imported.json.id}`);
    // Our extension's first step for a large file: a presigned PUT under imports/.
    await made('POST', '/contacts/imports/uploads', {});
    // An unsubscribe link of the contact's topic, signed with the keys the local extension twin
    // holds (read through it, as the functions read them): its page (GET), then the one-click POST.
    const links = new SignedUnsubscribeLinks({
      origin: 'https://localhost',
      keys: () => unsubscribeKeys(LOCAL_UNSUBSCRIBE_KEYS_SECRET).keys(),
    });
    const link = await links.url({
      address: 'grants+one@example.test',
      topicId: topic.id,
      emailId: newEmailId(),
    });
    const token = link.slice('https://localhost/unsubscribe/'.length);
    expect((await api.call('GET', `/../unsubscribe/${token}`, { key: null })).status).toBe(200);
    const oneClick = await api.call('POST', `/../unsubscribe/${token}`, {
      key: null,
      body: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(oneClick.status).toBe(200);
    // A one-click from an address with no contact, whose contact another request creates first:
    // the unsubscribe's new contact loses (its conditional put), and it takes back what it wrote.
    const raced = await links.url({
      address: 'grants-race@example.test',
      topicId: topic.id,
      emailId: newEmailId(),
    });
    arranged.push({
      functionName: 'unsubscribe',
      command: 'PutItem',
      // The contact's own item (its sk, marshalled: this runs below the document client).
      matches: (input) =>
        JSON.stringify((input.Item as Record<string, unknown> | undefined)?.sk) === '{"S":"CONTACT"}',
      before: async () => {
        await made('POST', '/contacts', { email: 'grants-race@example.test' });
      },
    });
    const racedClick = await api.call(
      'POST',
      `/../unsubscribe/${raced.slice('https://localhost/unsubscribe/'.length)}`,
      {
        key: null,
        body: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    );
    expect(racedClick.status).toBe(200);
    expect(arranged).toEqual([]);
    // An email to the topic whose second recipient SES refuses for good: that recipient's outcome
    // is recorded failed, its event (with a long address, too large for the status item) an item
    // of its own (PutItem).
    const refusedAddress = `grants-refused@${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.example.test`;
    arranged.push({
      functionName: 'process-send-queue',
      command: 'SendEmail',
      matches: (input) => JSON.stringify(input.Destination ?? {}).includes('grants-refused@'),
      before: async () => {
        throw Object.assign(new Error('Address blacklisted.'), { name: 'MessageRejected', $fault: 'client' });
      },
    });
    const toTopic = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: ['success@simulator.amazonses.com', refusedAddress],
        subject: 'To a topic',
        text: 'x',
        topic_id: topic.id,
      },
    });
    expect(toTopic.status, JSON.stringify(toTopic.json)).toBe(200);
    await service.idle();
    expect(arranged).toEqual([]);
    // A broadcast's email (its item as the broadcasts API keeps it, its email as the fan-out makes
    // it, its job on the send queue): the consumer and SES's events raise its tally (PutItem,
    // UpdateItem); its recipients (with their contacts: BatchGetItem) and clicked links are read.
    const broadcastId = newUuid();
    await db.send(
      new PutCommand({
        TableName: service.tableName,
        Item: { pk: keys.broadcasts, sk: keys.broadcast(broadcastId), id: broadcastId, status: 'sending' },
      }),
    );
    const broadcastEmail = {
      id: newEmailId(),
      content: {
        ...toContent(parseInput(sendEmailSchema, email({ subject: 'Broadcast' }))),
        broadcast_id: broadcastId,
      },
    };
    await repos.emails.create({ ...broadcastEmail, created_at: new Date().toISOString() });
    await sqs.send(
      new SendMessageCommand({ QueueUrl: service.queues.send, MessageBody: toQueueMessage(broadcastEmail) }),
    );
    await service.idle();
    const delivered = await waitFor(
      () => api.call('GET', `/broadcasts/${broadcastId}/recipients?type=delivered`),
      (answer) => answer.json.data?.length === 1,
    );
    expect(delivered.json.data[0].email_id).toBe(broadcastEmail.id);
    expect((await api.call('GET', `/broadcasts/${broadcastId}/clicked-links`)).status).toBe(200);
    // An SMTP email (issue 42): its MIME in the content store, sent by the consumer as SES v2 raw
    // content, which IAM authorises as ses:SendRawEmail.
    {
      const smtpEmail = {
        id: newEmailId(),
        content: toContent(parseInput(sendEmailSchema, email({ subject: 'Over SMTP' }))),
      };
      const mime = Buffer.from(
        'From: Acme <hello@acme.test>\r\nTo: success@simulator.amazonses.com\r\nSubject: Over SMTP\r\n\r\nHi\r\n',
      );
      const key = mimeKey(smtpEmail.id);
      const s3 = new S3Client({
        endpoint: service.endpoints.s3,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials,
      });
      await s3.send(new PutObjectCommand({ Bucket: service.contentBucket, Key: key, Body: mime }));
      const withMime = { ...smtpEmail, content: { ...smtpEmail.content, mime: { key, size: mime.length } } };
      await repos.emails.create({ ...withMime, created_at: new Date().toISOString() });
      await sqs.send(
        new SendMessageCommand({ QueueUrl: service.queues.send, MessageBody: toQueueMessage(withMime) }),
      );
      await service.idle();
      await waitFor(
        () => repos.emails.getState(smtpEmail.id),
        (state) => Boolean(state?.sent_at),
      );
    }
    // Broadcasts (issue 41): every route of the API, a send at a time and its cancel, a duplicate, a
    // preview for the contact; then a create with send whose fan-out step SQS refuses (its send is
    // undone: UpdateItem).
    const broadcastBody = {
      name: 'Grants',
      segment_id: segment.id,
      topic_id: topic.id,
      from: 'Acme <hello@acme.test>',
      subject: 'Hi {{{contact.first_name|there}}}',
      html: '<p>On {{{contact.plan}}}</p>',
    };
    const broadcast = await made('POST', '/broadcasts', broadcastBody);
    await made('GET', '/broadcasts');
    await made('GET', `/broadcasts/${broadcast.id}`);
    await made('PATCH', `/broadcasts/${broadcast.id}`, { subject: 'Hello {{{FIRST_NAME|there}}}' });
    await made('POST', `/broadcasts/${broadcast.id}/preview`, { contact: contact.id });
    const broadcastCopy = await made('POST', `/broadcasts/${broadcast.id}/duplicate`);
    await made('POST', `/broadcasts/${broadcastCopy.id}/send`, { scheduled_at: 'in 1 hour' });
    await made('POST', `/broadcasts/${broadcastCopy.id}/cancel`);
    await made('DELETE', `/broadcasts/${broadcast.id}`);
    arranged.push({
      functionName: 'create-broadcast',
      command: 'SendMessage',
      before: async () => {
        throw Object.assign(new Error('The queue refused the message.'), {
          name: 'InvalidParameterValue',
          $fault: 'client',
        });
      },
    });
    const unqueued = await api.call('POST', '/broadcasts', {
      body: { ...broadcastBody, send: true, scheduled_at: 'in 1 day' },
    });
    expect(unqueued.status, JSON.stringify(unqueued.json)).toBe(500);
    expect(arranged).toEqual([]);
    // The keys' monthly rotation (scheduled by its own construct, not by the local service).
    await runAs('rotate-unsubscribe-keys', () => rotateUnsubscribeKeys());
    // A broadcast to the segment and topic, fanned out in one step: the broadcast item (as the API
    // writes it) and its totals already counting its one email handled, so the step also marks it sent.
    const fanOutId = '019abcd2-6f1e-7c3a-9b1d-2e4f6a8c0b14';
    await db.send(
      new PutCommand({
        TableName: service.tableName,
        Item: {
          pk: 'BROADCASTS',
          sk: `BROADCAST#${fanOutId}`,
          id: fanOutId,
          name: 'Grants',
          segment_id: segment.id,
          topic_id: topic.id,
          from: 'Acme <hello@acme.test>',
          subject: 'Hi {{{contact.first_name|there}}}',
          reply_to: [],
          preview_text: 'News',
          html: '<p>{{{contact.plan}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a>',
          text: null,
          status: 'queued',
          created_at: new Date().toISOString(),
          scheduled_at: null,
          sent_at: null,
          generation: 1,
        },
      }),
    );
    await db.send(
      new PutCommand({
        TableName: service.tableName,
        Item: { pk: keys.broadcastTotals(fanOutId, 0), sk: keys.broadcastTotalsSk, sent: 1 },
      }),
    );
    await runAs('fan-out-broadcast', () =>
      fanOutBroadcast(
        sqsEvent([{ body: JSON.stringify({ broadcast_id: fanOutId, generation: 1 }), messageId: 'grants' }]),
        lambdaContext('fan-out-broadcast', 120_000),
      ),
    );
    await made('DELETE', `/contacts/${contact.id}`);
    await made('DELETE', `/segments/${segment.id}`);
    await made('DELETE', `/audiences/${audience.id}`);
    await made('DELETE', `/topics/${topic.id}`);
    await made('DELETE', `/contact-properties/${property.id}`);
    await service.idle();
    // The segment's clean-up, run here (its job waits 10 s on the queue, for the index to catch up).
    await runAs('clean-up-audience', () =>
      cleanUpAudience(
        sqsEvent([
          { body: JSON.stringify({ kind: 'segment', segment_id: segment.id }), messageId: 'grants' },
        ]),
        lambdaContext('clean-up-audience', 60_000),
      ),
    );

    // Request logs: the requests above, stored by the writer (BatchWriteItem) as the subscription
    // delivers them; listed from the table, an error class through the status index (then its
    // items), and read by id (with the items holding its group's bodies).
    expect((await api.call('GET', '/emails/em_01jz0000000000000000000000')).status).toBe(404);
    await service.idle();
    const logs = await api.call('GET', '/logs?limit=5');
    expect(logs.json.data).toHaveLength(5);
    expect(
      (await api.call('GET', `/logs?status=2xx&limit=5&after=${logs.json.data[0].id}`)).json.data.length,
    ).toBe(5);
    expect((await api.call('GET', '/logs?status=4xx&limit=5')).json.data.length).toBeGreaterThan(0);
    for (const { id } of logs.json.data) expect((await api.call('GET', `/logs/${id}`)).status).toBe(200);
    // A log whose bodies another log of its group holds (get-log's BatchGetItem): how lines are
    // grouped depends on how the subscription batched them, so one such group is written here.
    const grouped = [0, 1].map((i) => ({
      id: logIdOf(`grants-group-${i}`, Date.now()),
      created_at: new Date().toISOString(),
      method: 'POST',
      endpoint: '/emails',
      response_status: 200,
      user_agent: null,
      api_key_id: null,
      duration_ms: 1,
      request_body: JSON.stringify({ subject: `grouped ${i}` }),
      response_body: JSON.stringify({ id: newEmailId() }),
    }));
    await repos.requestLogs.put(grouped, 30);
    const held = await api.call('GET', `/logs/${[...grouped].sort((a, b) => (a.id < b.id ? -1 : 1))[1]?.id}`);
    expect(held.status).toBe(200);
    expect(JSON.stringify(held.json.request_body)).toContain('grouped');
  } finally {
    await receiver.close();
    await api.close();
    sqs.destroy();
    ses.destroy();
    db.destroy();
  }
}, 180_000);

/**
 * Calls the reading of the sources derives (test/support/derived-calls.ts) that a function never
 * makes, by the code that would make them: the method is reached by its name only, from a value
 * whose type the reading leaves as `any` (a package's), or sits on a branch another function takes.
 * Each is checked to be derived still and never recorded by the scenarios above.
 */
const DERIVED_BUT_NOT_MADE: Record<string, { functions: string[]; why: string }> = {
  'adapters/dynamodb/suppression-repository.ts#DynamoSuppressionRepository.add': {
    functions: ['batch-remove-suppressions', 'delete-suppression', 'get-suppression', 'list-suppressions'],
    why: 'addresses are added by hand (the add routes) and from SES events (process-ses-events); these read or remove them',
  },
  'adapters/dynamodb/request-log-repository.ts#DynamoRequestLogRepository.write': {
    functions: ['get-log', 'list-logs'],
    why: 'the log routes read; write-request-logs writes',
  },
  'adapters/dynamodb/unique-names.ts#UniqueNames.release': {
    functions: ['process-send-queue', 'process-broadcast-queue'],
    why: "names (a domain's, a template's alias) are given back by their routes; the consumer only reads them",
  },
  'adapters/dynamodb/unpublished-event-store.ts#DynamoUnpublishedEventStore.keepOne': {
    functions: [
      'list-contacts',
      'get-contact',
      'list-audience-contacts',
      'get-audience-contact',
      'delete-contact',
      'delete-audience-contact',
      'delete-topic',
      'update-contact-topics',
    ],
    why: "the contacts' and topics' stores (wiring/contacts.ts, wiring/topics.ts) write with UpdateItem (unpublishedEventStore); the PutItem branch is unpublishedEventStoreByPut's. The contacts' read routes are given the store by contactApiDeps (wiring/contacts.ts) but no publisher (PUBLISHING names the writes only), so they never keep an event",
  },
  'adapters/dynamodb/webhook-repository.ts#DynamoWebhookRepository.recordAttempt': {
    functions: ['process-send-queue', 'process-broadcast-queue', 'replay-webhook-event'],
    why: 'delivery attempts are recorded by the webhook delivery functions; the consumer queues events, and a replay records one pending message (PutItem), no attempt',
  },
  'adapters/dynamodb/email-repository.ts#DynamoEmailRepository.claim': {
    functions: ['dispatch-scheduled'],
    why: "the scheduler queues due emails and the consumer claims them; a `claim` the reading cannot type in the scheduler's reach (a queued job's) reaches the repository's",
  },
  'adapters/dynamodb/client.ts#queryPages': {
    functions: [
      'update-webhook',
      'send-email',
      'send-batch',
      'create-segment',
      'get-segment',
      'update-segment',
      'delete-segment',
      'create-audience',
      'get-audience',
      'delete-audience',
      'add-contact-segment',
      'remove-contact-segment',
      'get-topic',
      'update-broadcast',
    ],
    why: "The segment and topic routes (and update-broadcast, which checks the segment and topic it names) hold DynamoAudienceReads, whose whole-partition reads (topics(), properties(), choicesOf(), membershipsOf()) the reading reaches from its single lookups, which are all they make (GetItem). update-webhook reads and writes one endpoint; the guarded lookup's `options.all` (Node's lookup options, untyped to the reading) reaches every port's `all`, the webhooks' whole-list read among them. The send routes' reschedule (unmarking an email they could not queue) gives it its own time again, so its expiry does not move and its search items are not read",
  },
  'adapters/dynamodb/contact-writes.ts#DynamoContactWrites.putOver': {
    functions: ['delete-contact', 'delete-audience-contact'],
    why: "the deletes remove a contact; putting one over its version is the PATCH routes' (one port, ContactWrites, holds both)",
  },
  'adapters/dynamodb/client.ts#batchGet': {
    functions: [
      'send-email',
      'update-contact',
      'delete-contact',
      'get-audience-contact',
      'update-audience-contact',
      'delete-audience-contact',
      'create-segment',
      'list-segments',
      'get-segment',
      'update-segment',
      'delete-segment',
      'create-audience',
      'list-audiences',
      'get-audience',
      'delete-audience',
      'add-contact-segment',
      'remove-contact-segment',
      'clean-up-audience',
      'create-broadcast',
      'update-broadcast',
      'send-broadcast',
    ],
    why: "send-email reads no batch: its `find` and `list` (on arrays, on packages' values) reach the repositories' batch reads, the consumer's suppression lookup and the list routes'. The audience routes hold DynamoAudienceReads, one class, so the reading reaches all its reads (segments(), contactsByAddresses(), choicesFor()): these make only its single lookups (a contact, a segment, a topic: GetItem; the broadcasts' writes a segment and a topic, and the properties' Query), and the clean-up its store's Query and BatchWriteItem",
  },
};

afterAll(async () => {
  recorder?.stop();
  stopRecordingSecrets();
  stopArranging();
  await service?.stop();
});

function requirements(calls: RecordedCall[]) {
  const queueIds = new Map([
    [service.queues.send, logicalId(stack, stack.send.queue)],
    [service.queues.sendDeadLetters, logicalId(stack, stack.send.deadLetterQueue)],
    [service.queues.broadcastLane, logicalId(stack, stack.send.laneQueue)],
    [service.queues.broadcastLaneDeadLetters, logicalId(stack, stack.send.laneDeadLetterQueue)],
    [service.queues.events, logicalId(stack, stack.sesEvents.queue)],
    [service.queues.eventsDeadLetters, logicalId(stack, stack.sesEvents.deadLetterQueue)],
    [service.queues.webhooks, logicalId(stack, stack.webhooks.queue)],
    [service.queues.webhookDeadLetters, logicalId(stack, stack.webhooks.deadLetterQueue)],
    [service.queues.contactImports, logicalId(stack, stack.audience.importQueue)],
    [service.queues.contactImportDeadLetters, logicalId(stack, stack.audience.importDeadLetterQueue)],
    [service.queues.audienceCleanup, logicalId(stack, stack.audience.cleanupQueue)],
    [service.queues.audienceCleanupDeadLetters, logicalId(stack, stack.audience.cleanupDeadLetterQueue)],
    [service.queues.broadcastFanOut, logicalId(stack, stack.broadcasts.fanOutQueue)],
    [service.queues.broadcastFanOutDeadLetters, logicalId(stack, stack.broadcasts.fanOutDeadLetterQueue)],
    [service.queues.broadcastLane, logicalId(stack, stack.send.laneQueue)],
    [service.queues.broadcastLaneDeadLetters, logicalId(stack, stack.send.laneDeadLetterQueue)],
  ]);
  // Receiving's (the template is synthesized in us-east-1, where SES receives, as the service runs).
  const { receiving } = stack;
  if (!receiving) throw new Error(`${stack.region} synthesized no receiving: the local service receives`);
  queueIds.set(service.queues.receiptRules, logicalId(stack, receiving.ruleQueue));
  queueIds.set(service.queues.receiptRulesDeadLetters, logicalId(stack, receiving.ruleDeadLetterQueue));
  queueIds.set(service.queues.receivedFailures, logicalId(stack, receiving.failures));
  const ids = {
    tableId: logicalId(stack, stack.table.table),
    configurationSetId: logicalId(stack, stack.sesEvents.configurationSet),
    domainSets: domainSets(),
    queueIdByUrl: (url: string) => queueIds.get(url),
    secretIdByName: (name: string) =>
      name === LOCAL_UNSUBSCRIBE_KEYS_SECRET ? logicalId(stack, stack.unsubscribeKeys.secret) : undefined,
    bucketIdByName: (name: string) =>
      name === service.contentBucket ? logicalId(stack, stack.content.bucket) : undefined,
  };
  const byFunction = new Map<string, Map<string, Requirement>>();
  for (const call of calls) {
    const wanted = byFunction.get(call.functionName) ?? new Map<string, Requirement>();
    for (const requirement of requirementsOf(call, ids))
      wanted.set(describeRequirement(requirement), requirement);
    byFunction.set(call.functionName, wanted);
  }
  return byFunction;
}

describe('grants match the calls the code makes', () => {
  it('the scenarios reach every function of the stack', () => {
    const called = new Set(recorder.calls.map((c) => c.functionName));
    // The public pages make no AWS call at all (see below).
    const publicPages = new Set(PUBLIC_ROUTES.map((r) => r.handler));
    expect([...called].sort()).toEqual(
      Object.keys(stack.functions)
        .filter((f) => !publicPages.has(f))
        .sort(),
    );
    // Each function with a content grant made S3 calls (presigning a link counts: it is signed
    // with the function's own credentials).
    const s3 = new Set(
      recorder.calls.filter((c) => c.service === 'S3').map((c) => `${c.functionName} ${c.operation}`),
    );
    expect([...s3].sort()).toEqual([
      // HEAD: the size of a file fetched from its path, known once the consumer kept it.
      'create-contact-import PutObject',
      // Presigning the upload's PUT under imports/ (signed with its own s3:PutObject).
      'create-contact-import-upload PutObject',
      'get-attachment GetObject',
      'get-attachment HeadObject',
      'get-email GetObject',
      'get-received-attachment GetObject',
      'get-received-email GetObject',
      'get-shared-email GetObject',
      // The import's CSV, read from its checkpoint's byte offset.
      'import-contacts GetObject',
      'list-attachments GetObject',
      'list-attachments HeadObject',
      'list-received-attachments GetObject',
      'process-send-queue GetObject',
      'process-send-queue PutObject',
      // The raw message SES wrote (read), its bodies and attachments (written); the sweep's hourly
      // look lists received/raw/.
      'receive-email GetObject',
      'receive-email PutObject',
      'send-email PutObject',
      'sweep-received GetObject',
      'sweep-received ListObjectsV2',
      'sweep-received PutObject',
    ]);
  });

  it('the scenarios drive the recovery paths: a check that lost its race reads the domain, a create whose answers were lost updates its set', () => {
    const made = (functionName: string, operation: string) =>
      recorder.calls.some((c) => c.functionName === functionName && c.operation === operation);
    expect(made('check-domains', 'GetItem')).toBe(true);
    for (const operation of [
      'PutConfigurationSetDeliveryOptions',
      'PutConfigurationSetTrackingOptions',
      'UpdateConfigurationSetEventDestination',
    ])
      expect(made('create-domain', operation), operation).toBe(true);
  });

  it("every AWS call a function makes is allowed by that function's role", () => {
    const denied: string[] = [];
    for (const [functionName, wanted] of requirements(recorder.calls)) {
      const statements = policiesOf(stack, template, functionName);
      for (const [text, requirement] of wanted)
        if (!allows(statements, requirement)) denied.push(`${functionName}: ${text}`);
    }
    expect(denied).toEqual([]);
  });

  it("every AWS call a function's code can make is granted to its role, or named as one it never makes", () => {
    const ungranted: string[] = [];
    const excused = new Set<string>();
    for (const functionName of Object.keys(stack.functions)) {
      const statements = policiesOf(stack, template, functionName);
      for (const [call, via] of derivedCalls(functionName)) {
        const [service, operation] = call.split(':') as [string, string];
        if (iamActionsOf(service, operation).some((action) => grantsAction(statements, action))) continue;
        const unexcused = via.filter((code) => !DERIVED_BUT_NOT_MADE[code]?.functions.includes(functionName));
        if (unexcused.length) ungranted.push(`${functionName}: ${call} (${unexcused.join(', ')})`);
        for (const code of via) excused.add(`${code} ${functionName} ${call}`);
        // Never made in the scenarios (else the role needs it).
        const made = recorder.calls.some(
          (c) => c.functionName === functionName && c.service === service && c.operation === operation,
        );
        expect(made, `${functionName} makes ${call}`).toBe(false);
      }
    }
    expect(ungranted).toEqual([]);
    // Each entry still stands for a call derived and not granted.
    const stale = Object.entries(DERIVED_BUT_NOT_MADE).flatMap(([code, { functions }]) =>
      functions
        .filter((f) => ![...excused].some((e) => e.startsWith(`${code} ${f} `)))
        .map((f) => `${code} ${f}`),
    );
    expect(stale).toEqual([]);
  });

  it("the local S3 answers a missing object as AWS answers each function's role: 403 without s3:ListBucket", () => {
    const bucketId = logicalId(stack, stack.content.bucket);
    for (const functionName of Object.keys(stack.functions)) {
      const lists = allows(policiesOf(stack, template, functionName), {
        action: 's3:ListBucket',
        resource: { kind: 'bucket', bucketId },
      });
      expect(missingObjectStatus(functionName), functionName).toBe(lists ? 404 : 403);
    }
  });

  it("the local SES answers each SES call as AWS answers each function's role: refused where the template grants it not", () => {
    const ids = {
      tableId: logicalId(stack, stack.table.table),
      queueIdByUrl: () => undefined,
      configurationSetId: logicalId(stack, stack.sesEvents.configurationSet as never),
      domainSets: domainSets(),
    };
    const actions = [
      'SendEmail',
      'SendRawEmail',
      'GetAccount',
      'DeleteSuppressedDestination',
      'CreateEmailIdentity',
      'GetEmailIdentity',
      'PutEmailIdentityMailFromAttributes',
      'DeleteEmailIdentity',
      'CreateConfigurationSet',
      'PutConfigurationSetDeliveryOptions',
      'PutConfigurationSetTrackingOptions',
      'CreateConfigurationSetEventDestination',
      'DeleteConfigurationSet',
    ];
    for (const functionName of Object.keys(stack.functions)) {
      const statements = policiesOf(stack, template, functionName);
      for (const operation of actions) {
        // A set's calls name a domain's own set (the only sets the functions manage).
        const configurationSetName = operation.includes('ConfigurationSet')
          ? `${domainSets().localPrefix}dom_x`
          : undefined;
        const granted = requirementsOf(
          {
            functionName,
            service: 'SESv2',
            operation,
            ...(configurationSetName ? { configurationSetName } : {}),
          },
          ids,
        ).every((r) => allows(statements, r));
        expect(sesAllows(functionName, operation), `${functionName} ses:${operation}`).toBe(granted);
      }
    }
  });

  it('gives the public pages no access to anything (no table, queue, SES or bucket) and no table name', () => {
    // The web console's page and files are public pages too, each behind its own API route.
    expect(PUBLIC_ROUTES.map((r) => r.handler)).toEqual(
      expect.arrayContaining(['get-openapi', 'get-api-reference', 'get-console', 'get-console-asset']),
    );
    const routeKeys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
    );
    expect(routeKeys).toEqual(expect.arrayContaining(['GET /', 'GET /assets/{file}']));
    for (const { handler } of PUBLIC_ROUTES) {
      const actions = policiesOf(stack, template, handler).flatMap((s) => [s.Action].flat());
      expect(
        actions.filter((a) => /^(dynamodb|sqs|ses|s3|sns|kms):/.test(a)),
        handler,
      ).toEqual([]);
      const id = logicalId(stack, stack.functions[handler] as never);
      const variables = template.toJSON().Resources[id].Properties.Environment?.Variables ?? {};
      expect(
        Object.keys(variables).filter((k) => /TABLE|QUEUE|BUCKET|TOPIC/.test(k)),
        handler,
      ).toEqual([]);
    }
  });

  it('every DynamoDB and SES action a role is granted is one its function uses', () => {
    const unused: string[] = [];
    const used = requirements(recorder.calls);
    for (const functionName of Object.keys(stack.functions)) {
      const actions = new Set([...(used.get(functionName)?.values() ?? [])].map((r) => r.action));
      const granted = policiesOf(stack, template, functionName)
        .flatMap((s) => [s.Action].flat())
        .filter((action) => /^(dynamodb|ses):/.test(action));
      for (const action of granted) if (!actions.has(action)) unused.push(`${functionName}: ${action}`);
    }
    expect(unused).toEqual([]);
  });
});
