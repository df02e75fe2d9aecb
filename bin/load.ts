#!/usr/bin/env node
/**
 * `npm run load`: a steady open-loop load against `npm start` (a request every 1/RPS seconds,
 * whether or not earlier ones have answered): sends, reads of sent emails and list pages, spread
 * over several keys. Prints requests by kind and status, p50/p99 latency, and the pipeline's
 * backlog at the end. Latency counts from when a request was due, so waiting anywhere counts. Any
 * answer but 2xx (and 429, which is the per-key limit doing its job) is an error, and so is no
 * answer within LOAD_DEADLINE_MS of being due; the run exits 1 when there is one.
 * The local SES takes LOCAL_SES_MAX_SEND_RATE emails a second (here 1,000 by default, so the API and
 * the pipeline are what is measured; `npm run burst` measures sending at SES's rate).
 *   LOAD_RPS=200 LOAD_SECONDS=60 LOAD_KEYS=4 RATE_LIMIT_PER_SECOND=100 LOAD_MIX=send:0.3,get:0.5,list:0.2 npm run load
 * One hot key: LOAD_ONE_KEY=true sends everything with one key whose limit (RATE_LIMIT_PER_SECOND,
 * then 5,000 by default: 13 rate shards) is above the offered rate, so its requests are counted
 * across its rate shards and a 429 counts as an error too.
 *   LOAD_ONE_KEY=true LOAD_RPS=200 npm run load
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { shardCount } from '../functions/api-keys/rate-limit.js';
import { startNpmStart } from '../test/support/npm-start.js';

const RPS = Number(process.env.LOAD_RPS ?? 200);
const SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const ONE_KEY = process.env.LOAD_ONE_KEY === 'true';
const KEYS = ONE_KEY ? 1 : Number(process.env.LOAD_KEYS ?? 4);
const LIMIT = Number(process.env.RATE_LIMIT_PER_SECOND ?? (ONE_KEY ? 5000 : 100));
/** A request unanswered this long after it was due counts as an error (API Gateway gives up at 30 s). */
const DEADLINE_MS = Number(process.env.LOAD_DEADLINE_MS ?? 30_000);
/** Shares of sends, reads and list pages: LOAD_MIX=send:0.3,get:0.5,list:0.2 */
const MIX = { send: 0.3, get: 0.5, list: 0.2 };
for (const part of (process.env.LOAD_MIX ?? '').split(',').filter(Boolean)) {
  const [kind, share] = part.split(':');
  if (kind === 'send' || kind === 'get' || kind === 'list') MIX[kind] = Number(share);
}
const ADMIN = 'esk_load_harness_admin_key_0123456789';
const SES_RATE = process.env.LOCAL_SES_MAX_SEND_RATE ?? '1000';

const dataDir = mkdtempSync(join(tmpdir(), 'load-'));
const service = await startNpmStart({
  PORT: '0',
  VIEWER_PORT: '0',
  LOCAL_DATA_DIR: dataDir,
  DEV_API_KEY: ADMIN,
  RATE_LIMIT_PER_SECOND: String(LIMIT),
  LOCAL_SES_MAX_SEND_RATE: SES_RATE,
  LOCAL_SES_MAX_24H_SEND: '10000000',
});
if (!service.baseUrl) throw new Error(`npm start did not start:\n${service.output()}`);
const { baseUrl } = service;
const dispatcher = new Agent({
  connect: { ca: readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8') },
  // A client's usual kept-alive pool. Latency and the deadline count from when a request was due,
  // so a request that waits here for a connection is measured all the same.
  connections: 256,
  connectTimeout: DEADLINE_MS,
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
});

async function call(method: string, path: string, key: string, body?: unknown, due = performance.now()) {
  const t0 = due;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    dispatcher,
    signal: AbortSignal.timeout(Math.max(1, Math.round(DEADLINE_MS - (performance.now() - due)))),
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, ms: performance.now() - t0, json: text ? JSON.parse(text) : undefined };
}

// Setup: a verified domain, and the keys the traffic is spread over.
const domain = await call('POST', '/domains', ADMIN, { domain: 'acme.test' });
while ((await call('GET', `/domains/${domain.json.id}`, ADMIN)).json.status !== 'verified')
  await new Promise((resolve) => setTimeout(resolve, 200));
const keys: string[] = [];
for (let i = 0; i < KEYS; i++)
  keys.push((await call('POST', '/api-keys', ADMIN, { name: `load ${i}` })).json.token);
const sent: string[] = [
  (
    await call('POST', '/emails', ADMIN, {
      from: 'hello@acme.test',
      to: 'success@simulator.amazonses.com',
      subject: 'seed',
      text: 'x',
    })
  ).json.id,
];

type Kind = keyof typeof MIX;
const latencies: Record<Kind, number[]> = { send: [], get: [], list: [] };
const statuses = new Map<string, number>();
const errors: string[] = [];
const recipients = ['success', 'bounce', 'complaint', 'ooto'];

async function one(i: number, due: number) {
  const key = keys[i % keys.length] as string;
  const r = (i * 0.618_033_988_75) % 1; // an even spread of kinds over time
  const kind: Kind = r < MIX.send ? 'send' : r < MIX.send + MIX.get ? 'get' : 'list';
  try {
    const result =
      kind === 'send'
        ? await call(
            'POST',
            '/emails',
            key,
            {
              from: 'Load <hello@acme.test>',
              to: `${recipients[i % recipients.length]}@simulator.amazonses.com`,
              subject: `load ${i}`,
              text: 'x'.repeat(200),
            },
            due,
          )
        : kind === 'get'
          ? await call('GET', `/emails/${sent[Math.floor(Math.random() * sent.length)]}`, key, undefined, due)
          : await call('GET', '/emails?limit=20', key, undefined, due);
    if (kind === 'send' && result.status === 200) sent.push(result.json.id);
    statuses.set(`${kind} ${result.status}`, (statuses.get(`${kind} ${result.status}`) ?? 0) + 1);
    if (result.status >= 200 && result.status < 300) latencies[kind].push(result.ms);
    else if (result.status !== 429 || ONE_KEY)
      errors.push(`${kind} ${result.status} ${JSON.stringify(result.json).slice(0, 120)}`);
  } catch (error) {
    const what =
      (error as Error).name === 'TimeoutError' ? `timeout (over ${DEADLINE_MS / 1000} s)` : 'error';
    statuses.set(`${kind} ${what}`, (statuses.get(`${kind} ${what}`) ?? 0) + 1);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    errors.push(
      `${kind} ${what}: ${String(error)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`,
    );
  }
}

const total = RPS * SECONDS;
const started = performance.now();
const inFlight: Promise<void>[] = [];
let lagMs = 0;
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / RPS;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  else lagMs = Math.max(lagMs, -wait);
  inFlight.push(one(i, due));
}
await Promise.all(inFlight);
const elapsed = (performance.now() - started) / 1000;

// How far behind the pipeline is: sent emails still queued right after the load.
let queued = 0;
for (const id of sent.slice(-200))
  if ((await call('GET', `/emails/${id}`, ADMIN)).json.status === 'queued') queued++;

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
console.log(
  `\n## Load: ${total} requests at ${RPS}/s over ${KEYS} key${KEYS === 1 ? '' : 's'} (limit ${LIMIT}/s each, ${shardCount(LIMIT)} rate shard${shardCount(LIMIT) === 1 ? '' : 's'}), ${elapsed.toFixed(1)} s; the local SES takes ${SES_RATE} a second (LOCAL_SES_MAX_SEND_RATE)\n`,
);
console.log('| kind | requests | p50 | p99 | max |');
console.log('|---|---|---|---|---|');
for (const kind of Object.keys(MIX) as Kind[]) {
  const values = latencies[kind];
  console.log(
    `| ${kind} | ${values.length} | ${pct(values, 50).toFixed(0)} ms | ${pct(values, 99).toFixed(0)} ms | ${Math.max(0, ...values).toFixed(0)} ms |`,
  );
}
console.log('\n| answer | count |');
console.log('|---|---|');
for (const [answer, count] of [...statuses].sort()) console.log(`| ${answer} | ${count} |`);
const completed = [...statuses.values()].reduce((sum, n) => sum + n, 0);
const keptUp = completed / elapsed >= RPS * 0.97;
console.log(
  `\nanswered ${completed} requests in ${elapsed.toFixed(1)} s: ${(completed / elapsed).toFixed(0)}/s for ${RPS}/s offered (${keptUp ? 'kept up' : 'saturated: most of the latency is waiting'})`,
);
console.log(
  `errors (anything but 2xx${ONE_KEY ? '' : ' and 429'}): ${errors.length}, of which 5xx: ${errors.filter((e) => / 5\d\d /.test(e)).length}; the generator fell behind its schedule by at most ${lagMs.toFixed(0)} ms`,
);
console.log(
  `of the last ${Math.min(200, sent.length)} emails sent, ${queued} were still queued when the load stopped`,
);
for (const error of errors.slice(0, 10)) console.log(`- ${error}`);

await dispatcher.close();
await service.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(errors.length ? 1 : 0);
