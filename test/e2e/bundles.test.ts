import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/routes.js';
import { buildFunction, ENTRY_FILE } from '../../lib/bundling.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { context, httpEvent, parseBody, sqsEvent } from '../support/events.js';
import { httpsClient, waitFor } from '../support/https.js';

/**
 * The functions as deployed: each built by lib/bundling.ts (its SDK stand-ins included) into one
 * file, imported from there and invoked as Lambda invokes it, against the local emulators (dynalite,
 * fauxqs for SQS and S3, the SES v2 stand-in). Credentials come from AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, as on Lambda. What the unit tests of the stand-ins cannot show: that a
 * bundle still signs, sends, reads, stores and presigns.
 *
 * The bundled send-email queues to a queue of its own, which only the bundled consumer reads (the
 * local service's pollers run the unbundled handlers on theirs).
 */
const BUNDLED = [
  'create-domain',
  'verify-domain',
  'get-domain',
  'send-email',
  'process-send-queue',
  'get-email',
  'list-emails',
  'list-attachments',
  'update-email',
] as const;
type HttpLambda = (event: unknown, context: unknown) => Promise<APIGatewayProxyStructuredResultV2>;

let service: LocalService;
let dir: string;
let sendQueueUrl: string;
let sqs: SQSClient;
const bundles: Record<string, { handler: unknown; source: string; bytes: number; dir: string }> = {};

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 0,
    rateLimitPerSecond: 1000,
    // No background runs: the sweeper would queue to the bundle's queue below.
    sweepIntervalMs: 3_600_000,
    domainCheckIntervalMs: 3_600_000,
  });
  const region = 'us-east-1';
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  sqs = new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL_SQS, region, credentials });
  const queue = await ensureQueueWithDlq(sqs, 'bundles-send', {
    maxReceiveCount: 5,
    visibilityTimeoutSeconds: 30,
  });
  sendQueueUrl = queue.queue.url;
  // Read when a bundle first builds its clients: the unbundled handlers never run in this file.
  process.env.SEND_QUEUE_URL = sendQueueUrl;
  process.env.SEND_DEAD_LETTER_QUEUE_URL = queue.dlq.url;

  dir = mkdtempSync(join(tmpdir(), 'bundles-'));
  for (const name of BUNDLED) {
    const built = await buildFunction(name, join(dir, name));
    const outfile = join(built.outdir, ENTRY_FILE);
    const source = built.files.map((file) => readFileSync(join(built.outdir, file.path), 'utf8')).join('\n');
    const { handler } = await import(pathToFileURL(outfile).href);
    bundles[name] = { handler, source, bytes: source.length, dir: built.outdir };
  }
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const handlerOf = <T>(name: (typeof BUNDLED)[number]): T => {
  const bundle = bundles[name];
  if (!bundle) throw new Error(`${name} was not built`);
  return bundle.handler as T;
};

/** Invokes a bundled HTTP function as API Gateway would, with the local key. */
async function call(
  name: (typeof BUNDLED)[number],
  options: { body?: unknown; id?: string; query?: Record<string, string> } = {},
) {
  const route = ROUTES.find((r) => r.handler === name);
  if (!route) throw new Error(`no route for ${name}`);
  const path = route.path.replace('{id}', options.id ?? '');
  const response = await handlerOf<HttpLambda>(name)(
    httpEvent({
      method: route.method,
      path,
      routeKey: `${route.method} ${route.path}`,
      token: service.apiKey,
      body: options.body,
      query: options.query,
      pathParameters: options.id ? { id: options.id } : undefined,
    }),
    context(name),
  );
  return { status: response.statusCode, json: parseBody(response as { body?: string }) };
}

describe('the bundled functions against the local emulators', () => {
  it('carry the stand-ins, not the credential chain', () => {
    for (const name of BUNDLED) {
      const { source } = bundles[name] as { source: string };
      expect(source, name).toContain('these bundles read them from AWS_ACCESS_KEY_ID');
      // Strings of the full chain (credential-provider-node, -ini) and of mnemonist.
      expect(source, name).not.toContain('AWS_PROFILE is set, skipping fromEnv provider');
      expect(source, name).not.toContain('Could not load credentials from any providers');
      expect(source, name).not.toMatch(/Profile .* requires a role_arn/);
    }
  });

  it('add, verify and read a domain (DynamoDB, SES identities, the webhook queue)', async () => {
    const created = await call('create-domain', { body: { domain: 'bundles.test' } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const verified = await waitFor(
      () => call('verify-domain', { id }),
      (r) => r.json?.status === 'verified',
    );
    expect(verified.status).toBe(200);
    expect((await call('get-domain', { id })).json).toMatchObject({
      id,
      name: 'bundles.test',
      status: 'verified',
    });
  });

  it('send an email with an attachment, deliver it, and read it back (S3, SQS, SES, presigning)', async () => {
    const file = randomBytes(4096);
    const sent = await call('send-email', {
      body: {
        from: 'Bundles <hello@bundles.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Built as deployed',
        text: 'See attached.',
        attachments: [{ filename: 'report.bin', content: file.toString('base64') }],
      },
    });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const id = sent.json.id as string;

    // The bundled consumer takes the message from the bundle's queue, as its event source would.
    const { Messages = [] } = await waitFor(
      () =>
        sqs.send(
          new ReceiveMessageCommand({ QueueUrl: sendQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        ),
      (r) => (r.Messages?.length ?? 0) > 0,
    );
    expect(Messages).toHaveLength(1);
    const consume = handlerOf<(e: SQSEvent, c: unknown) => Promise<SQSBatchResponse>>('process-send-queue');
    const result = await consume(
      sqsEvent(Messages.map((m) => ({ body: m.Body ?? '', messageId: m.MessageId }))),
      context('process-send-queue'),
    );
    expect(result.batchItemFailures).toEqual([]);

    const email = await waitFor(
      () => call('get-email', { id }),
      (r) => r.json?.status === 'delivered',
    );
    expect(email.json).toMatchObject({ id, subject: 'Built as deployed', status: 'delivered' });
    const listed = await call('list-emails', { query: { limit: '10' } });
    expect(listed.status).toBe(200);
    expect(listed.json.data.map((e: { id: string }) => e.id)).toContain(id);

    const attachments = await call('list-attachments', { id });
    expect(attachments.status).toBe(200);
    const [attachment] = attachments.json.data;
    expect(attachment).toMatchObject({ filename: 'report.bin', size: file.length });
    const download = await fetch(attachment.download_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(file)).toBe(true);
  });
});

const RUNNER = fileURLToPath(new URL('../support/bundle-runner.mjs', import.meta.url));
let events = 0;

/**
 * A bundled function invoked once in a fresh Node process (a cold start), as Lambda invokes it:
 * its result, and the files of its bundle Node loaded at init and in all.
 */
async function coldInvoke(name: (typeof BUNDLED)[number], event: unknown, env: Record<string, string> = {}) {
  const bundle = bundles[name];
  if (!bundle) throw new Error(`${name} was not built`);
  const file = join(dir, `event-${++events}.json`);
  writeFileSync(file, JSON.stringify(event));
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [RUNNER, bundle.dir, file, name], {
    // As on Lambda: its dependencies are built at init (functions/http/middleware.ts).
    env: { ...process.env, AWS_LAMBDA_FUNCTION_NAME: name, ...env },
    timeout: 30_000,
  });
  const lines = stdout.trim().split('\n');
  return {
    ...(JSON.parse(lines.at(-1) as string) as {
      result: { statusCode?: number; body?: string; batchItemFailures?: unknown[] };
      /** What the handler threw, as Lambda's runtime logs it. */
      error?: { errorType: string; errorMessage: string; stack: string };
      init: string[];
      all: string[];
      /** Files of the bundle the code read itself (a source map), at init and in all. */
      readAtInit: string[];
      read: string[];
    }),
    /** The lines the function logged (Powertools writes errors to stderr off Lambda). */
    logged: [...lines.slice(0, -1), ...stderr.split('\n')].filter((line) => line.startsWith('{')),
  };
}

/** POST /v1/emails to the bundled send-email in a fresh process. */
async function coldSend(body: Record<string, unknown>) {
  const route = ROUTES.find((r) => r.handler === 'send-email');
  const run = await coldInvoke(
    'send-email',
    httpEvent({
      method: 'POST',
      path: '/v1/emails',
      routeKey: `${route?.method} ${route?.path}`,
      token: service.apiKey,
      body: { from: 'Cold <hello@bundles.test>', to: 'success@simulator.amazonses.com', ...body },
    }),
  );
  const loadedLater = run.all.filter((file) => !run.init.includes(file));
  return { ...run, json: parseBody(run.result as { body?: string }), loadedLater };
}

describe('code loaded on first use, by built bundles in fresh processes', () => {
  let client: ReturnType<typeof httpsClient>;
  const get = (path: string) => client.call('GET', path);
  const post = (path: string, body?: unknown) => client.call('POST', path, { body });
  afterAll(() => client?.close());

  beforeAll(async () => {
    client = httpsClient(service.baseUrl, service.certificate, service.apiKey);
    // The sender's domain (the first describe verifies it when run with this one).
    const created = await call('create-domain', { body: { domain: 'bundles.test' } });
    const id = (created.json.id ?? (await call('get-domain', { id: 'bundles.test' })).json.id) as string;
    await waitFor(
      () => call('verify-domain', { id }),
      (r) => r.json?.status === 'verified',
    );
  });

  it('a plain send loads nothing after init', async () => {
    const sent = await coldSend({ subject: 'Plain', text: 'Hello.' });
    expect(sent.result.statusCode, JSON.stringify(sent.json)).toBe(200);
    expect(sent.init).toContain('index.mjs');
    expect(sent.loadedLater).toEqual([]);
  });

  it('a send with an attachment loads the content store on first use, and the consumer delivers it', async () => {
    const file = randomBytes(2048);
    const sent = await coldSend({
      subject: 'Cold attachment',
      text: 'Attached.',
      attachments: [{ filename: 'cold.bin', content: file.toString('base64') }],
    });
    expect(sent.result.statusCode, JSON.stringify(sent.json)).toBe(200);
    // The S3 content store (an island: lib/bundling.ts) and the MIME table (cold.bin has no type).
    expect(sent.loadedLater).toContain('island-content-store.mjs');
    expect(
      sent.loadedLater.some((file) => file.startsWith('content-types-')),
      sent.loadedLater.join(),
    ).toBe(true);
    const id = sent.json.id as string;

    const { Messages = [] } = await waitFor(
      () =>
        sqs.send(
          new ReceiveMessageCommand({ QueueUrl: sendQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        ),
      (r) => (r.Messages ?? []).some((m) => m.Body?.includes(id)),
    );
    const mine = Messages.filter((m) => m.Body?.includes(id));
    const consumed = await coldInvoke(
      'process-send-queue',
      sqsEvent(mine.map((m) => ({ body: m.Body ?? '', messageId: m.MessageId }))),
    );
    expect(consumed.result.batchItemFailures).toEqual([]);
    expect(consumed.all.filter((f) => !consumed.init.includes(f))).toContain('island-content-store.mjs');
    const email = await waitFor(
      () => get(`/emails/${id}`),
      (r) => r.json?.status === 'delivered',
    );
    expect(email.json).toMatchObject({ id, subject: 'Cold attachment' });
    const attachments = await get(`/emails/${id}/attachments`);
    expect(attachments.json.data[0]).toMatchObject({ filename: 'cold.bin', size: file.length });
  });

  it('a send scheduled in words loads the date parser on first use', async () => {
    const before = Date.now();
    const sent = await coldSend({ subject: 'Cold schedule', text: 'Later.', scheduled_at: 'in 2 hours' });
    expect(sent.result.statusCode, JSON.stringify(sent.json)).toBe(200);
    expect(
      sent.loadedLater.some((file) => file.startsWith('schedule-english-')),
      sent.loadedLater.join(),
    ).toBe(true);
    const email = await get(`/emails/${sent.json.id}`);
    const at = Date.parse(email.json.scheduled_at);
    expect(at - before).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(at - before).toBeLessThan(2 * 3_600_000 + 60_000);
  });

  it('a send with a template loads its rendering on first use', async () => {
    const created = await post('/templates', {
      name: 'Cold',
      subject: 'Hello {{{NAME}}}',
      html: '<p>Hi {{{NAME}}}</p>',
      variables: [{ key: 'NAME', type: 'string' }],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect((await post(`/templates/${created.json.id}/publish`)).status).toBe(200);
    const sent = await coldSend({ template: { id: created.json.id, variables: { NAME: 'Ann' } } });
    expect(sent.result.statusCode, JSON.stringify(sent.json)).toBe(200);
    expect(
      sent.loadedLater.some((file) => file.startsWith('send-templates-')),
      sent.loadedLater.join(),
    ).toBe(true);
    const email = await get(`/emails/${sent.json.id}`);
    expect(email.json).toMatchObject({ subject: 'Hello Ann', html: '<p>Hi Ann</p>' });
  });

  it('a reschedule due soon loads the send queue (an island) and queues the email', async () => {
    const sent = await coldSend({
      subject: 'Cold reschedule',
      text: 'Sooner.',
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(sent.result.statusCode, JSON.stringify(sent.json)).toBe(200);
    const id = sent.json.id as string;
    const route = ROUTES.find((r) => r.handler === 'update-email');
    const moved = await coldInvoke(
      'update-email',
      httpEvent({
        method: 'PATCH',
        path: `/v1/emails/${id}`,
        routeKey: `${route?.method} ${route?.path}`,
        token: service.apiKey,
        body: { scheduled_at: new Date(Date.now() + 3_000).toISOString() },
        pathParameters: { id },
      }),
    );
    expect(moved.result.statusCode, moved.result.body).toBe(200);
    expect(moved.init).not.toContain('island-email-queue.mjs');
    expect(moved.all).toContain('island-email-queue.mjs');
    // Queued by the island's SQS client, delayed until its time.
    const { Messages = [] } = await waitFor(
      () =>
        sqs.send(
          new ReceiveMessageCommand({ QueueUrl: sendQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        ),
      (r) => (r.Messages ?? []).some((m) => m.Body?.includes(id)),
      15_000,
    );
    expect(Messages.some((m) => m.Body?.includes(id))).toBe(true);
  });
});

/** A stack's frames, the error's own line left out. */
const framesOf = (stack: string) => stack.split('\n').filter((line) => line.trimStart().startsWith('at '));
/** A frame at a place in the service's sources: `functions/http/middleware.ts:212:11`. */
const SOURCE_FRAME = /\(?functions\/[\w/-]+\.ts:\d+:\d+\)?$/;

describe('errors name the sources, whose maps are read only when an error is logged', () => {
  it('a cold start and its request read no source map, nor an error answered (a 404)', async () => {
    const run = await coldInvoke(
      'get-email',
      httpEvent({
        method: 'GET',
        path: '/v1/emails/em_01m80mv90eew9ryfvqd1ksnhes',
        routeKey: 'GET /v1/emails/{id}',
        token: service.apiKey,
        pathParameters: { id: 'em_01m80mv90eew9ryfvqd1ksnhes' },
      }),
    );
    expect(run.result.statusCode, JSON.stringify(run.result)).toBe(404);
    expect(run.readAtInit).toEqual([]);
    expect(run.read.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(run.all.filter((file) => file.endsWith('.map'))).toEqual([]);
    // Beside every file of the build, its map: deployed, never loaded.
    const files = readdirSync(bundles['get-email']?.dir as string);
    for (const file of files.filter((f) => f.endsWith('.mjs'))) expect(files).toContain(`${file}.map`);
  });

  it('an error a function logs has its stack in source files and lines, the map read then', async () => {
    // Its table gone (DynamoDB answers ResourceNotFoundException): the API key's lookup fails, and the
    // function answers 500 and logs the error.
    const run = await coldInvoke(
      'get-email',
      httpEvent({
        method: 'GET',
        path: '/v1/emails/em_x',
        routeKey: 'GET /v1/emails/{id}',
        token: service.apiKey,
        pathParameters: { id: 'em_x' },
      }),
      { POWERTOOLS_LOG_LEVEL: 'ERROR', TABLE_NAME: 'no-such-table' },
    );
    expect(run.result.statusCode, JSON.stringify(run.result)).toBe(500);
    const line = run.logged
      .map((text) => JSON.parse(text))
      .find((entry) => entry.message === 'unhandled error');
    expect(line, run.logged.join('\n')).toBeDefined();
    const stack = line.error.stack as string;
    // Every frame of the bundle at its source (the SDK's under node_modules/, the service's under functions/).
    expect(stack).not.toMatch(/\.mjs:\d+:\d+/);
    expect(
      framesOf(stack).some((frame) => SOURCE_FRAME.test(frame)),
      stack,
    ).toBe(true);
    expect(run.readAtInit).toEqual([]);
    expect(run.read.filter((file) => file.endsWith('.map')).length).toBeGreaterThan(0);
  });

  it('an error that leaves a handler reaches Lambda with its stack in source files and lines', async () => {
    // No Records: the consumer's own code throws, and the error leaves the handler for Lambda to log.
    const run = await coldInvoke('process-send-queue', {});
    expect(run.error?.errorType, JSON.stringify(run)).toBe('TypeError');
    const frames = framesOf(run.error?.stack ?? '');
    expect(frames[0], run.error?.stack).toMatch(/functions\/handlers\/process-send-queue\.ts:\d+:\d+\)?$/);
    expect(run.error?.stack).not.toMatch(/index\.mjs:\d+:\d+/);
    expect(run.readAtInit).toEqual([]);
  });
});
