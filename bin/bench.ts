#!/usr/bin/env node
/**
 * `npm run bench`: what speed and cost look like, measured (never asserted in unit tests).
 *  1. Each function as deployed (lib/bundling.ts), started cold in fresh processes (interleaved) as
 *     Lambda starts it and given its typical first request (bench/typical.ts) against the local
 *     service: bytes loaded at init (against its budget, lib/budgets.ts) and by that request,
 *     gzipped, median import and first-request times (BENCH_FUNCTIONS=a,b for some).
 *  2. A handler's own time per request, its AWS calls stubbed (p50, p99).
 *  3. What one email costs on AWS, accept to delivered: every AWS request by function and
 *     operation, DynamoDB write and read units (metered as AWS bills them), Lambda invocations, log
 *     bytes, and the cost model per 1,000 emails; what the request logs add (write units, their
 *     line's ingestion, their storage, the writer); DynamoDB item sizes. BENCH_RECORD=file writes
 *     the run's per-email counts and batch fills there (`npm run bench:record`: the file
 *     test/unit/model-bench.test.ts holds the model to).
 *  4. The local pipeline's steady state (npm start's threads): emails/s, CPU per email.
 *  5. Webhooks: what one endpoint subscribed to email.sent and email.delivered adds per email, and
 *     how long an event takes to reach it (a receiver on this machine).
 *  6. Attachments: what an email with a 1 MB attachment costs (S3 requests and bytes, the queue
 *     message, the request), and how long it takes.
 *  7. Scheduled emails: how close to their time they go, and what they cost over one sent at once.
 *  8. Request logs: what writing a request's log line adds to its time (p50, p99) and what a
 *     logged request costs (CloudWatch Logs ingestion, the writer, DynamoDB write units).
 *  9. Where a cold start's time goes: a few functions built as deployed plus source maps, started
 *     cold as in section 1 with V8's sampling profiler on (bin/bench/profile.ts), init and the
 *     first typical request profiled apart. Each profile's time split into compiling the modules
 *     (V8), node's module loader, the bundle's own code, garbage collection and Node's internals;
 *     the bundle's code by package (`zod`, `@aws-sdk/…`) or project file (`functions/…`) and by
 *     function (original source and line, through the source maps); medians of a few runs.
 *     BENCH_PROFILE=list-emails,send-email (default: list-emails, send-email, process-send-queue,
 *     get-email) BENCH_PROFILE_RUNS=5 choose them; the profiler slows the code, read the shares.
 * The email is bin/bench/receipt.ts, a transactional receipt (about 7 KB of HTML and text).
 * The local SES takes 1,000 emails a second here (so the pipeline, not SES's rate, is measured);
 * `npm run burst` measures sending at SES's rate.
 * BENCH_EMAILS=2000 BENCH_CONCURRENCY=8 BENCH_METERED=200 BENCH_IMPORT_RUNS=11 npm run bench
 * BENCH_SECTIONS=1,3 npm run bench     only some sections
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../functions/adapters/dynamodb/client.js';
import { createRepositories } from '../functions/adapters/dynamodb/repositories.js';
import { keys } from '../functions/adapters/dynamodb/table.js';
import { FUNCTIONS } from '../functions/catalog.js';
import { toQueueMessage } from '../functions/emails/send-job.js';
import { invocationStats } from '../local/invocation.js';
import { startLocalService } from '../local/service.js';
import { httpsClient, waitFor } from '../test/support/https.js';
import { startReceiver } from '../test/support/webhook-receiver.js';
import { bundleTable } from './bench/bundles.js';
import { captureLogLines, reportCost } from './bench/cost.js';
import { itemBytes, startMeter } from './bench/meter.js';
import { DEFAULT_PROFILED, profileTable } from './bench/profile.js';
import { receipt as email } from './bench/receipt.js';
import { requestLogSummary } from './bench/record.js';
import { BENCH_SERVICE } from './bench/throughput.js';

const EMAILS = Number(process.env.BENCH_EMAILS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const METERED = Number(process.env.BENCH_METERED ?? 200);
const IMPORT_RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 11);
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? '1,2,3,4,5,6,7,8,9').split(',').map(Number));
const PROFILED = process.env.BENCH_PROFILE ? process.env.BENCH_PROFILE.split(',') : DEFAULT_PROFILED;
const PROFILE_RUNS = Number(process.env.BENCH_PROFILE_RUNS ?? 5);
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** Every function of the catalog, the routes' first. */
const ALL = Object.keys(FUNCTIONS);
/** BENCH_FUNCTIONS=send-email,list-emails: section 1 for these only. */
const handlers = process.env.BENCH_FUNCTIONS ? process.env.BENCH_FUNCTIONS.split(',') : ALL;
const out = mkdtempSync(join(tmpdir(), 'bench-'));
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;
/** A section that loads the handler modules runs in a process of its own (bin/bench/child.ts). */
const inChild = <T>(section: string, ...args: (string | number)[]): T => {
  const output = execFileSync(
    process.execPath,
    ['--import', 'tsx', 'bin/bench/child.ts', section, ...args.map(String)],
    { env: { ...process.env, LOG_LEVEL: 'silent' }, maxBuffer: 64 * 1024 * 1024 },
  )
    .toString()
    .trim()
    .split('\n');
  return JSON.parse(output.at(-1) ?? 'null') as T;
};

if (SECTIONS.has(1)) {
  console.log(
    '\n## 1. Functions as deployed (lib/bundling.ts), each started cold and given its typical first request\n',
  );
  await bundleTable(handlers, out, IMPORT_RUNS);
}

if (SECTIONS.has(9)) {
  console.log(
    `\n## 9. Where a cold start's time goes (V8's sampling profiler; init and the first typical request, ${PROFILE_RUNS} runs each)\n`,
  );
  await profileTable(PROFILED, join(out, 'profile'), PROFILE_RUNS);
}

if (SECTIONS.has(2)) {
  console.log("\n## 2. A handler's own time per request, its AWS calls stubbed (5,000 requests after 500)\n");
  console.log('| request | p50 | p99 |');
  console.log('|---|---|---|');
  for (const row of inChild<string[]>('handlers', 5000, 500)) console.log(row);
}

if (SECTIONS.has(8)) {
  console.log(
    "\n## 8. Request logs: what a request's log line adds to its time (5,000 requests after 500) and costs\n",
  );
  for (const row of inChild<string[]>('request-logs', 5000, 500)) console.log(row);
}

if (SECTIONS.has(4)) {
  console.log(
    `\n## 4. Local pipeline, steady state (${EMAILS} emails after 300, ${CONCURRENCY} clients, npm start's threads; the local SES takes ${BENCH_SERVICE.sesAccount.maxSendRate} a second)\n`,
  );
  const r = inChild<{
    endToEnd: number;
    accepted: number;
    cpuMsPerEmail: number;
    sendP50: number;
    sendP95: number;
  }>('throughput', EMAILS, CONCURRENCY, 300);
  console.log(
    `- ${r.endToEnd.toFixed(1)} emails/s end to end (first send to last event applied); accepted at ${r.accepted.toFixed(1)}/s, POST /v1/emails p50 ${ms(r.sendP50)}, p95 ${ms(r.sendP95)}`,
  );
  console.log(`- ${r.cpuMsPerEmail.toFixed(1)} ms of CPU per email (every thread, the clients' included)`);
}

if (!(SECTIONS.has(3) || SECTIONS.has(5) || SECTIONS.has(6) || SECTIONS.has(7))) process.exit(0);

// 3, 5-7: one service on one thread, where the meter's middleware sees every function's calls.
process.env.LOG_LEVEL = 'INFO';
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
const logs = captureLogLines();
const meter = startMeter();
const service = await startLocalService(BENCH_SERVICE);
const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
if (domain.status !== 201) throw new Error(`could not add the domain: ${domain.text}`);
await api.call('POST', `/domains/${domain.json.id}/verify`);
const sendAll = async (n: number, body: (i: number) => unknown = email) => {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const response = await api.call('POST', '/emails', { body: body(i) });
        if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
        ids.push(response.json.id);
      }
    }),
  );
  return ids;
};
await sendAll(20); // warm up: every function has built its clients
await service.idle();
const db = createDocumentClient(
  new DynamoDBClient({
    endpoint: service.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  }),
);

if (SECTIONS.has(3)) {
  meter.attach(
    new DynamoDBClient({
      endpoint: service.endpoints.dynamodb,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    }),
    service.tableName,
  );
  const invocationsBefore = invocationStats();
  logs.start();
  const requestLogsBefore = service.requestLogsIngested();
  const ids = await sendAll(METERED);
  await service.idle();
  // The request logs' lines go to the local twin of their subscription, not to stdout: counted there.
  const requestLogBytes = service.requestLogsIngested().bytes - requestLogsBefore.bytes;
  const logged = logs.stop();
  const lines = meter.lines();
  meter.detach();
  console.log(
    `\n## 3. What one email costs on AWS, accept to delivered (${METERED} one-recipient receipts, ${CONCURRENCY} clients, no webhook endpoint)\n`,
  );
  const cost = reportCost({
    emails: METERED,
    lines,
    invocationsBefore,
    invocationsAfter: invocationStats(),
    logBytes: logged.bytes + requestLogBytes,
    requestLogBytes,
    apiRequests: METERED,
  });
  await requestLogSummary({
    db,
    tableName: service.tableName,
    emails: METERED,
    lines,
    cost,
    requestLogBytes,
  });
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: service.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.email(ids[0] ?? '') },
    }),
  );
  console.log("\nDynamoDB items of one delivered receipt (DynamoDB's size rule):\n");
  for (const item of Items)
    console.log(
      `- ${String(item.sk).replace(/#.*/, '#…')}: ${Object.entries(item).reduce((sum, [name, v]) => sum + Buffer.byteLength(name) + itemBytes(v), 0)} bytes`,
    );
}

/** AWS calls per email between two counts at the emulators (polling left out). */
const callsPerEmail = (from: Record<string, number>, to: Record<string, number>, emails: number) => {
  console.log('| call | per email |');
  console.log('|---|---|');
  for (const key of Object.keys(to).sort()) {
    const delta = (to[key] ?? 0) - (from[key] ?? 0);
    if (delta === 0 || key.includes('ReceiveMessage') || key.includes('GetQueueAttributes')) continue;
    console.log(`| ${key} | ${(delta / emails).toFixed(2)} |`);
  }
};

// 5. Webhooks: one endpoint subscribed to email.sent and email.delivered.
const HOOKED = 300;
if (SECTIONS.has(5)) {
  const receiver = await startReceiver();
  const hook = await api.call('POST', '/webhooks', {
    body: { endpoint: receiver.url, events: ['email.sent', 'email.delivered'] },
  });
  if (hook.status !== 201) throw new Error(`could not add the webhook: ${hook.text}`);
  // The very next event reaches it (functions read the endpoints for each event they raise).
  await api.call('POST', '/emails', { body: email(0) });
  const seen = await waitFor(
    async () => receiver.received.length,
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
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < HOOKED) {
        const i = next++;
        const t = performance.now();
        const response = await api.call('POST', '/emails', { body: email(i) });
        if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
        sentAt.set(response.json.id, t);
      }
    }),
  );
  await service.idle();
  const expected = hookReceivedBefore + 2 * HOOKED;
  const got = await waitFor(
    async () => receiver.received.length,
    (n) => n >= expected,
    60_000,
  );
  if (got < expected)
    throw new Error(`the endpoint received ${got - hookReceivedBefore} of ${2 * HOOKED} events`);
  const hookSettled = performance.now() - hookStarted;
  const hookAfter = await service.awsCalls();
  const toDelivered: number[] = [];
  for (const r of receiver.received.slice(hookReceivedBefore)) {
    const event = JSON.parse(r.body);
    const t = sentAt.get(event.data.email_id);
    if (event.type === 'email.delivered' && t !== undefined) toDelivered.push(r.at - t);
  }
  console.log(
    `\n## 5. Webhooks: one endpoint subscribed to email.sent and email.delivered (${HOOKED} emails, ${2 * HOOKED} messages)\n`,
  );
  console.log(
    `- all ${2 * HOOKED} messages received after ${(hookSettled / 1000).toFixed(2)} s; POST /v1/emails → email.delivered at the endpoint: p50 ${ms(pct(toDelivered, 50))}, p95 ${ms(pct(toDelivered, 95))}`,
  );
  console.log(
    '- AWS calls per email with the endpoint (counted at the emulators; compare with section 3):\n',
  );
  callsPerEmail(hookBefore, hookAfter, HOOKED);

  // The endpoint goes (for the very next event), so the next section counts attachments alone.
  await api.call('DELETE', `/webhooks/${hook.json.id}`);
  await receiver.close();
}

// 6. An email with a 1 MB attachment (sent as base64 in the request, as the SDKs do).
if (SECTIONS.has(6)) {
  const ATTACHED = 20;
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
  console.log(`\n## 6. An email with a 1 MB attachment (${ATTACHED} emails, one at a time)\n`);
  console.log(
    `- request ${kb(requestBytes)} (base64); POST /v1/emails p50 ${ms(pct(fileLatencies, 50))}; all delivered after ${(fileSettled / 1000).toFixed(2)} s: ${fileDelivered}/${ATTACHED}`,
  );
  console.log(
    `- send queue message: ${Buffer.byteLength(message)} bytes (the file travels as a reference, never through SQS)`,
  );
  console.log('- AWS calls per email (counted at the emulators, S3 by HTTP method):\n');
  callsPerEmail(fileBefore, fileAfter, ATTACHED);
}

// 7. Scheduled emails: a burst all due at one time, a few seconds ahead.
if (SECTIONS.has(7)) {
  const SCHEDULED = 30;
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
  console.log(`\n## 7. Scheduled emails: ${SCHEDULED} due at the same moment, 4 s ahead\n`);
  console.log(
    `- handed to SES after their time by: min ${ms(Math.min(...lateness))}, p50 ${ms(pct(lateness, 50))}, max ${ms(Math.max(...lateness))} (never before: min ≥ 0)`,
  );
  console.log(
    '- AWS calls per email (counted at the emulators; compare with section 3; due within 90 s, each is queued by the send path itself, and the scheduler and sweeper are off in this run):\n',
  );
  callsPerEmail(scheduledBefore, scheduledAfter, SCHEDULED);
}

await api.close();
await service.stop();
logs.restore();
process.exit(0);
