#!/usr/bin/env node
/**
 * `npm run bench`: what speed and cost look like, measured (never asserted in unit tests).
 *  1. Bundle size of each function, built exactly as the stack builds it (lib/bundling.ts).
 *  2. Cold-start work per function: import of the bundle, then a first invocation that needs no
 *     network (builds the SDK clients), each in a fresh Node process.
 *  3. The local pipeline over HTTPS: send latency and throughput, time to delivered, list/get latency.
 *  4. AWS calls per email end to end, counted at the emulators, and DynamoDB bytes per item.
 *  5. Webhooks: what one endpoint subscribed to email.sent and email.delivered adds per email, and
 *     how long an event takes to reach it (a receiver on this machine).
 *  6. Attachments: what an email with a 1 MB attachment costs (S3 requests and bytes, the queue
 *     message, the request), and how long it takes.
 * BENCH_EMAILS=300 BENCH_CONCURRENCY=8 npm run bench
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { build } from 'esbuild';
import { createDocumentClient } from '../functions/adapters/dynamodb/client.js';
import { createRepositories } from '../functions/adapters/dynamodb/repositories.js';
import { keys } from '../functions/adapters/dynamodb/table.js';
import { toQueueMessage } from '../functions/core/send-job.js';
import { startLocalService } from '../functions/local/service.js';
import { FALLBACK_HANDLER, ROUTES } from '../functions/routes.js';
import { esbuildOptions } from '../lib/bundling.js';
import { httpsClient, waitFor } from '../test/support/https.js';
import { startReceiver } from '../test/support/webhook-receiver.js';

process.env.LOG_LEVEL ??= 'silent';
const EMAILS = Number(process.env.BENCH_EMAILS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const handlers = [
  ...ROUTES.map((r) => r.handler),
  FALLBACK_HANDLER,
  'process-send-queue',
  'process-ses-events',
  'check-domains',
  'sweep-emails',
  'deliver-webhooks',
];
const out = mkdtempSync(join(tmpdir(), 'bench-'));
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

// 1 + 2. Bundles and cold-start work.
console.log('\n## Functions (esbuild, minified ESM, node22, AWS SDK bundled)\n');
console.log('| function | bundle | gzipped | import | first call (client setup, no network) |');
console.log('|---|---|---|---|---|');
const probe = join(out, 'probe.mjs');
writeFileSync(
  probe,
  `const [file, kind] = process.argv.slice(2);
const t0 = performance.now();
const mod = await import(file);
const t1 = performance.now();
const ctx = { awsRequestId: 'b', getRemainingTimeInMillis: () => 10000, functionName: 'bench' };
const http = { version: '2.0', routeKey: 'GET /v1/emails', rawPath: '/v1/emails', rawQueryString: '', headers: {},
  requestContext: { http: { method: 'GET', path: '/v1/emails' } }, isBase64Encoded: false };
await mod.handler(kind === 'sqs' ? { Records: [] } : http, ctx).catch(() => undefined);
console.log(JSON.stringify({ importMs: t1 - t0, firstCallMs: performance.now() - t1 }));`,
);
for (const name of handlers) {
  const outfile = join(out, `${name}.mjs`);
  await build({ ...esbuildOptions(`functions/handlers/${name}.ts`, outfile), logLevel: 'error' });
  const code = readFileSync(outfile);
  const runs = Array.from(
    { length: 3 },
    () =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            probe,
            outfile,
            name.startsWith('process-') || name === 'check-domains' || name === 'sweep-emails'
              ? 'sqs'
              : 'http',
          ],
          {
            env: {
              ...process.env,
              TABLE_NAME: 't',
              SEND_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q',
              SEND_DEAD_LETTER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/dlq',
              CONFIGURATION_SET_NAME: 'c',
              AWS_REGION: 'us-east-1',
              LOG_LEVEL: 'silent',
              AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            },
          },
        ).toString(),
      ) as { importMs: number; firstCallMs: number },
  );
  console.log(
    `| ${name} | ${kb(code.length)} | ${kb(gzipSync(code).length)} | ${ms(
      pct(
        runs.map((r) => r.importMs),
        50,
      ),
    )} | ${ms(
      pct(
        runs.map((r) => r.firstCallMs),
        50,
      ),
    )} |`,
  );
}

// 3. The local pipeline over HTTPS.
const service = await startLocalService({
  port: 0,
  dataDir: null,
  viewerPort: 0,
  eventDelayMs: 20,
  domainVerifyMs: 0,
  // The domain is verified on demand below; no background checks in the counted calls (on AWS the
  // domain check and the sweeper cost a few calls a minute, whatever the traffic).
  domainCheckIntervalMs: 3_600_000,
  sweepIntervalMs: 3_600_000,
  rateLimitPerSecond: 100_000,
});
const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
if (domain.status !== 201) throw new Error(`could not add the domain: ${domain.text}`);
await api.call('POST', `/domains/${domain.json.id}/verify`);
const email = (i: number) => ({
  from: 'Acme <hello@acme.test>',
  to: 'success@simulator.amazonses.com',
  subject: `Your receipt #${100000 + i} from Acme`,
  html: `<p>${'Thanks for your order. '.repeat(90)}</p>`,
  text: 'Thanks for your order.',
});
for (let i = 0; i < 20; i++) await api.call('POST', '/emails', { body: email(i) }); // warm up
await service.idle();
const before = await service.awsCalls();

const latencies: number[] = [];
const ids: string[] = [];
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < EMAILS) {
      const i = next++;
      const t = performance.now();
      const response = await api.call('POST', '/emails', { body: email(i) });
      latencies.push(performance.now() - t);
      if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
      ids.push(response.json.id);
    }
  }),
);
const accepted = performance.now() - started;
await service.idle();
const settled = performance.now() - started;
const after = await service.awsCalls();
let delivered = 0;
for (const id of ids) if ((await api.call('GET', `/emails/${id}`)).json.status === 'delivered') delivered++;

const listLatency: number[] = [];
const getLatency: number[] = [];
for (let i = 0; i < 30; i++) {
  let t = performance.now();
  await api.call('GET', '/emails?limit=100');
  listLatency.push(performance.now() - t);
  t = performance.now();
  await api.call('GET', `/emails/${ids[i]}`);
  getLatency.push(performance.now() - t);
}

console.log(
  `\n## Local pipeline (${EMAILS} emails, ${CONCURRENCY} concurrent clients, emulators in process)\n`,
);
console.log(
  `- POST /v1/emails: p50 ${ms(pct(latencies, 50))}, p95 ${ms(pct(latencies, 95))}, ${(EMAILS / (accepted / 1000)).toFixed(0)} accepted/s`,
);
console.log(
  `- all ${EMAILS} settled (sent, events applied) after ${(settled / 1000).toFixed(2)} s; delivered: ${delivered}/${EMAILS}`,
);
console.log(
  `- GET /v1/emails?limit=100: p50 ${ms(pct(listLatency, 50))}; GET /v1/emails/{id}: p50 ${ms(pct(getLatency, 50))}`,
);

// 4. AWS calls per email and item sizes.
const callsPerEmail = (from: Record<string, number>, to: Record<string, number>, emails: number) => {
  console.log('| call | per email |');
  console.log('|---|---|');
  for (const key of Object.keys(to).sort()) {
    const delta = (to[key] ?? 0) - (from[key] ?? 0);
    if (delta === 0 || key.includes('ReceiveMessage') || key.includes('GetQueueAttributes')) continue;
    console.log(`| ${key} | ${(delta / emails).toFixed(2)} |`);
  }
};
console.log(
  '\n## AWS calls per email, end to end (send, consume, SES Send and delivery events), no webhook endpoint\n',
);
callsPerEmail(before, after, EMAILS);
console.log(
  '(SQS ReceiveMessage is left out: locally it is polling; on AWS the event source mapping polls, unbilled per email.)',
);

const db = createDocumentClient(
  new DynamoDBClient({
    endpoint: service.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  }),
);
const { Items = [] } = await db.send(
  new QueryCommand({
    TableName: service.tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.email(ids[0] ?? '') },
  }),
);
const size = (item: Record<string, unknown>) =>
  Object.entries(item).reduce(
    (sum, [name, value]) =>
      sum +
      Buffer.byteLength(name) +
      (typeof value === 'number'
        ? Math.ceil(String(value).length / 2) + 1
        : Buffer.byteLength(JSON.stringify(value))),
    0,
  );
console.log('\n## DynamoDB item sizes for one delivered email (2 KB html)\n');
for (const item of Items) console.log(`- ${String(item.sk).replace(/#.*/, '#…')}: ~${size(item)} bytes`);

// 5. Webhooks: one endpoint subscribed to email.sent and email.delivered.
const receiver = await startReceiver();
const hook = await api.call('POST', '/webhooks', {
  body: { endpoint: receiver.url, events: ['email.sent', 'email.delivered'] },
});
if (hook.status !== 201) throw new Error(`could not add the webhook: ${hook.text}`);
// Functions read the endpoints at most every 15 s: wait until the new one is seen.
const seen = await waitFor(
  async () => {
    await api.call('POST', '/emails', { body: email(0) });
    return receiver.received.length;
  },
  (n) => n > 0,
  30_000,
);
if (seen === 0) throw new Error('the webhook endpoint never received an event');
await service.idle();
// Let the warm-up's own events arrive before counting (the receiver is quiet for a second).
for (let last = -1; last !== receiver.received.length; ) {
  last = receiver.received.length;
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
const hookBefore = await service.awsCalls();
const hookReceivedBefore = receiver.received.length;
const sentAt = new Map<string, number>();
const hookStarted = performance.now();
next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < EMAILS) {
      const i = next++;
      const t = performance.now();
      const response = await api.call('POST', '/emails', { body: email(i) });
      if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
      sentAt.set(response.json.id, t);
    }
  }),
);
await service.idle();
const expected = hookReceivedBefore + 2 * EMAILS;
const got = await waitFor(
  async () => receiver.received.length,
  (n) => n >= expected,
  60_000,
);
if (got < expected)
  throw new Error(`the endpoint received ${got - hookReceivedBefore} of ${2 * EMAILS} events`);
const hookSettled = performance.now() - hookStarted;
const hookAfter = await service.awsCalls();
const toDelivered: number[] = [];
for (const r of receiver.received.slice(hookReceivedBefore)) {
  const event = JSON.parse(r.body);
  const t = sentAt.get(event.data.email_id);
  if (event.type === 'email.delivered' && t !== undefined) toDelivered.push(r.at - t);
}
console.log(
  `\n## Webhooks: one endpoint subscribed to email.sent and email.delivered (${EMAILS} emails, ${2 * EMAILS} messages)\n`,
);
console.log(
  `- all ${2 * EMAILS} messages received after ${(hookSettled / 1000).toFixed(2)} s; POST /v1/emails → email.delivered at the endpoint: p50 ${ms(pct(toDelivered, 50))}, p95 ${ms(pct(toDelivered, 95))}`,
);
console.log('- AWS calls per email with the endpoint (compare with the table above):\n');
callsPerEmail(hookBefore, hookAfter, EMAILS);

// The endpoint goes, so the next section counts attachments alone (functions see it gone within 15 s).
await api.call('DELETE', `/webhooks/${hook.json.id}`);
await new Promise((resolve) => setTimeout(resolve, 15_500));
await receiver.close();

// 6. An email with a 1 MB attachment (sent as base64 in the request, as the SDKs do).
const ATTACHED = Math.max(5, Math.floor(EMAILS / 15));
const file = Buffer.alloc(1024 * 1024, 7);
const withFile = (i: number) => ({
  ...email(i),
  attachments: [{ filename: `invoice-${i}.pdf`, content: file.toString('base64') }],
});
await service.idle();
const fileBefore = await service.awsCalls();
const fileLatencies: number[] = [];
const fileIds: string[] = [];
const fileStarted = performance.now();
for (let i = 0; i < ATTACHED; i++) {
  const t = performance.now();
  const response = await api.call('POST', '/emails', { body: withFile(i) });
  fileLatencies.push(performance.now() - t);
  if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
  fileIds.push(response.json.id);
}
await service.idle();
const fileSettled = performance.now() - fileStarted;
const fileAfter = await service.awsCalls();
let fileDelivered = 0;
for (const id of fileIds)
  if ((await api.call('GET', `/emails/${id}`)).json.status === 'delivered') fileDelivered++;
const repositories = createRepositories(service.tableName, db);
const storedContent = await repositories.emails.getContent(fileIds[0] ?? '');
const message = storedContent ? toQueueMessage({ id: fileIds[0] ?? '', content: storedContent }) : '';
const requestBytes = Buffer.byteLength(JSON.stringify(withFile(0)));
console.log(`\n## An email with a 1 MB attachment (${ATTACHED} emails, one at a time)\n`);
console.log(
  `- request ${kb(requestBytes)} (base64); POST /v1/emails p50 ${ms(pct(fileLatencies, 50))}; all delivered after ${(fileSettled / 1000).toFixed(2)} s: ${fileDelivered}/${ATTACHED}`,
);
console.log(
  `- send queue message: ${Buffer.byteLength(message)} bytes (the file travels as a reference, never through SQS)`,
);
console.log('- AWS calls per email (S3 counted by HTTP method):\n');
callsPerEmail(fileBefore, fileAfter, ATTACHED);

// 7. Scheduled emails: a burst all due at one time, a few seconds ahead.
const SCHEDULED = Math.max(10, Math.floor(EMAILS / 10));
await service.idle();
const scheduledBefore = await service.awsCalls();
const dueAt = new Date(Date.now() + 4_000).toISOString();
const scheduledIds: string[] = [];
for (let i = 0; i < SCHEDULED; i++) {
  const response = await api.call('POST', '/emails', { body: { ...email(i), scheduled_at: dueAt } });
  if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
  scheduledIds.push(response.json.id);
}
// No polling through the API while counting (each GET is AWS calls of its own): wait out the time,
// then until the queues are idle.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(dueAt) - Date.now()) + 500));
await service.idle();
const scheduledAfter = await service.awsCalls();
const lateness: number[] = [];
for (const id of scheduledIds) {
  const sent = (await api.call('GET', `/emails/${id}`)).json;
  if (sent.status !== 'delivered') throw new Error(`a scheduled email is ${sent.status}, not delivered`);
  lateness.push(Date.parse(sent.sent_at) - Date.parse(dueAt));
}
console.log(`\n## Scheduled emails: ${SCHEDULED} due at the same moment, 4 s ahead\n`);
console.log(
  `- handed to SES after their time by: min ${ms(Math.min(...lateness))}, p50 ${ms(pct(lateness, 50))}, max ${ms(Math.max(...lateness))} (never before: min ≥ 0)`,
);
console.log(
  '- AWS calls per email (compare with the table of section 4; due within 90 s, each is queued by the send path itself, and the scheduler and sweeper are off in this run):\n',
);
callsPerEmail(scheduledBefore, scheduledAfter, SCHEDULED);

await api.close();
await service.stop();
