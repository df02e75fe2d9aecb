#!/usr/bin/env node
/**
 * `npm run fuzz`: malformed and hostile requests against the local service over HTTPS. Every
 * answer must be under 500, and every error must be in the one error shape
 * (`{statusCode, name, message}` with statusCode equal to the HTTP status and a JSON content type),
 * including what Node's HTTP parser refuses before any handler runs.
 *   FUZZ_REQUESTS=10000 FUZZ_SEED=42 FUZZ_CONCURRENCY=16 npm run fuzz
 * Exits 1 when any answer breaks the rule, printing the first examples.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import fc from 'fast-check';
import { Agent, fetch } from 'undici';
import { ROUTES } from '../functions/routes.js';
import { startLocalService } from '../local/service.js';
import { hostileString } from '../test/support/arbitraries.js';

process.env.LOG_LEVEL ??= 'silent';
const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 16);

const dataDir = mkdtempSync(join(tmpdir(), 'fuzz-'));
const service = await startLocalService({
  port: 0,
  dataDir,
  viewerPort: 0,
  eventDelayMs: 20,
  domainVerifyMs: 100,
  domainCheckIntervalMs: 200,
  rateLimitPerSecond: 1_000_000,
});
const dispatcher = new Agent({ connect: { ca: service.certificate }, connections: CONCURRENCY });
const origin = new URL(service.baseUrl).origin;
const port = Number(new URL(service.baseUrl).port);

interface Probe {
  kind: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Sent over a raw TLS socket as is (what an HTTP client would refuse to send). */
  raw?: string;
}

async function call(path: string, init: { method: string; headers?: Record<string, string>; body?: string }) {
  const response = await fetch(`${origin}${path}`, { ...init, dispatcher });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

// A verified domain, a restricted key and a revoked key, so valid-looking requests go deep.
const auth = { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' };
const domain = JSON.parse(
  (await call('/v1/domains', { method: 'POST', headers: auth, body: '{"domain":"acme.test"}' })).text,
);
const sendingKey = JSON.parse(
  (
    await call('/v1/api-keys', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'fuzz', permission: 'sending_access', domain_id: domain.id }),
    })
  ).text,
).token as string;
const revoked = JSON.parse(
  (await call('/v1/api-keys', { method: 'POST', headers: auth, body: '{"name":"revoked"}' })).text,
);
await call(`/v1/api-keys/${revoked.id}`, { method: 'DELETE', headers: auth });
for (let i = 0; i < 100; i++) {
  const { text } = await call(`/v1/domains/${domain.id}`, { method: 'GET', headers: auth });
  if (JSON.parse(text).status === 'verified') break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}

// Generators.
const keys = fc.constantFrom(
  service.apiKey,
  sendingKey,
  revoked.token as string,
  'esk_',
  `esk_${'a'.repeat(5000)}`,
  'not-a-key',
  '',
);
const authHeader = fc.oneof(
  // Mostly keys that work, so requests go past authentication into validation and the handlers.
  { arbitrary: fc.constant(`Bearer ${service.apiKey}`), weight: 12 },
  { arbitrary: fc.constant(`Bearer ${sendingKey}`), weight: 4 },
  keys.map((k) => `Bearer ${k}`),
  keys.map((k) => `bearer   ${k}  `),
  keys.map((k) => `Basic ${Buffer.from(`${k}:`).toString('base64')}`),
  fc.string({ maxLength: 100 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
);
const emailField = fc.constantFrom(
  'from',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'subject',
  'html',
  'text',
  'attachments',
  'tags',
  '__proto__',
  'constructor',
);
const emailish = fc.record(
  {
    from: fc.oneof(fc.constant('Acme <hello@acme.test>'), hostileString),
    to: fc.oneof(
      fc.constant('success@simulator.amazonses.com'),
      hostileString,
      fc.array(hostileString, { maxLength: 70 }),
    ),
    subject: fc.oneof(fc.constant('Fuzz'), hostileString, fc.constant('s'.repeat(999))),
    text: fc.oneof(fc.constant('x'), hostileString),
  },
  { requiredKeys: [] },
);
const routePaths = [...new Set(ROUTES.map((r) => r.path))];
const idLike = fc.oneof(
  fc.constant('em_01m80mv90eew9ryfvqd1ksnhes'),
  fc.constant(domain.id as string),
  fc.constantFrom(
    '..',
    '../..',
    '%2e%2e',
    '%2F',
    '%zz',
    '%E0%A4%A',
    '%00',
    'em_',
    `em_${'z'.repeat(300)}`,
    '💌',
    'a b',
  ),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
);
const path = fc.oneof(
  fc.tuple(fc.constantFrom(...routePaths), idLike).map(([p, id]) => p.replace('{id}', id)),
  fc
    .array(fc.oneof(idLike, fc.constantFrom('v1', 'emails', 'domains', 'api-keys', 'verify')), {
      maxLength: 6,
    })
    .map((parts) => `/${parts.join('/')}`),
  fc.constantFrom(
    '/',
    '/v1',
    '/v1/',
    '//v1//emails',
    '/v1/emails/',
    '/V1/EMAILS',
    '/v1/emails?limit=',
    '/v1/emails?limit=1e2&offset=-1&status=sent&x=%ff',
  ),
  fc
    .tuple(
      fc.constantFrom('/v1/emails', '/v1/domains', '/v1/api-keys'),
      fc.dictionary(fc.constantFrom('limit', 'offset', 'status', 'after'), hostileString),
    )
    .map(([p, q]) => `${p}?${new URLSearchParams(q as Record<string, string>).toString()}`),
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD');
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
);
const body = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  emailish.map((v) => JSON.stringify(v)),
  fc
    .dictionary(emailField, fc.oneof(hostileString, fc.array(hostileString, { maxLength: 5 })))
    .map((v) => JSON.stringify(v)),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `{"to":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  fc
    .integer({ min: 200_000, max: 400_000 })
    .map((n) => JSON.stringify({ from: 'a@acme.test', to: 'b@x.com', subject: 's', html: 'h'.repeat(n) })),
  fc.constantFrom(
    '',
    '{',
    '{"from": ',
    'null',
    '[]',
    '"string"',
    '1e999',
    '{"a":1,"a":2}',
    '\u0000',
    '\ufeff{}',
  ),
  fc.string({ unit: 'binary', maxLength: 500 }),
);
const header = fc.tuple(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,30}$/),
  fc.string({ maxLength: 200 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
);

const fetchProbe: fc.Arbitrary<Probe> = fc
  .record({
    method,
    path,
    auth: fc.option(authHeader, { nil: undefined, freq: 10 }),
    contentType: fc.option(contentType, { nil: undefined }),
    body: fc.option(body, { nil: undefined }),
    extra: fc.array(header, { maxLength: 5 }),
    idempotency: fc.option(
      fc.oneof(
        fc.constant(''),
        fc.string({ maxLength: 300 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
      ),
      {
        nil: undefined,
      },
    ),
  })
  .map(({ method: m, path: p, auth: a, contentType: c, body: b, extra, idempotency }) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of extra) headers[name.toLowerCase()] = value;
    if (a !== undefined) headers.authorization = a;
    if (c !== undefined) headers['content-type'] = c;
    if (idempotency !== undefined) headers['idempotency-key'] = idempotency;
    const withBody = b !== undefined && m !== 'GET' && m !== 'HEAD';
    return { kind: 'request', method: m, path: p, headers, ...(withBody ? { body: b } : {}) };
  });

const rawRequest = (lines: string[], bodyText = '') => `${lines.join('\r\n')}\r\n\r\n${bodyText}`;
const rawProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.integer({ min: 11_000, max: 40_000 }).map((n) => ({
    kind: 'huge header',
    method: 'GET',
    path: '/v1/emails',
    raw: rawRequest(['GET /v1/emails HTTP/1.1', 'Host: localhost', `X-Big: ${'a'.repeat(n)}`]),
  })),
  fc.integer({ min: 200, max: 2000 }).map((n) => ({
    kind: 'many headers',
    method: 'GET',
    path: '/v1/emails',
    raw: rawRequest([
      'GET /v1/emails HTTP/1.1',
      'Host: localhost',
      ...Array.from({ length: n }, (_, i) => `X-H${i}: v`),
    ]),
  })),
  fc
    .constantFrom(
      'NOT HTTP AT ALL',
      'GET /v1/emails HTTP/9.9',
      'G\u0000T /v1/emails HTTP/1.1',
      'GET /v1/emails\u0000 HTTP/1.1',
      'GET http://[bad/v1/emails HTTP/1.1',
      'GET /v1/emails HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1',
      'POST /v1/emails HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked',
      'POST /v1/emails HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz',
      'GET /v1/emails HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \u00ff\u00fe',
      'GET /v1/emails HTTP/1.1\r\nHost: localhost\r\nX: a\r\n b',
      'GET /../../etc/passwd HTTP/1.1\r\nHost: localhost',
      'GET /v1/emails HTTP/1.0',
    )
    .map((line) => ({
      kind: 'malformed HTTP',
      method: 'RAW',
      path: line.slice(0, 40),
      raw: `${line}\r\n\r\n`,
    })),
);

function sendRaw(text: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  return new Promise((resolve) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca: service.certificate, servername: 'localhost' },
      () => socket.end(text),
    );
    let answer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
    });
    const done = () => {
      const [head = '', ...rest] = answer.toString('latin1').split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        text: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8'),
      });
    };
    socket.on('end', done);
    socket.on('error', done);
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

interface Failure {
  probe: Probe;
  status: number;
  why: string;
  answer: string;
}

/** The rule: under 500, and an error answer is JSON in the one shape, its statusCode the HTTP status. */
function check(
  probe: Probe,
  status: number,
  contentTypeHeader: string | null | undefined,
  text: string,
): string | undefined {
  if (status === 0) return 'no HTTP answer';
  if (status >= 500) return `answered ${status}`;
  if (probe.method === 'HEAD') return undefined; // no body by definition
  if (status < 400) return undefined;
  if (!/^application\/json/.test(contentTypeHeader ?? ''))
    return `error without a JSON content type (${contentTypeHeader})`;
  let json: { statusCode?: unknown; name?: unknown; message?: unknown };
  try {
    json = JSON.parse(text);
  } catch {
    return 'error body is not JSON';
  }
  if (json.statusCode !== status || typeof json.name !== 'string' || typeof json.message !== 'string')
    return 'error body outside the shape';
  return undefined;
}

const runs = Math.max(0, TOTAL - 1000);
const probes = [
  ...fc.sample(fetchProbe, { numRuns: runs, seed: SEED }),
  ...fc.sample(rawProbe, { numRuns: Math.min(TOTAL, 1000), seed: SEED + 1 }),
];
// Every method on every route, with and without a key, as well.
for (const route of ROUTES)
  for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'])
    for (const authorization of [undefined, `Bearer ${service.apiKey}`, `Bearer ${sendingKey}`])
      probes.push({
        kind: 'every method',
        method: m,
        path: route.path.replace('{id}', 'em_01m80mv90eew9ryfvqd1ksnhes'),
        headers: authorization ? { authorization } : {},
      });

const byStatus = new Map<number, number>();
const byKind = new Map<string, number>();
const failures: Failure[] = [];
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < probes.length) {
      const probe = probes[next++] as Probe;
      let status = 0;
      let type: string | null | undefined;
      let text = '';
      try {
        if (probe.raw !== undefined) {
          const answer = await sendRaw(probe.raw);
          ({ status, text } = answer);
          type = answer.headers['content-type'];
        } else {
          const answer = await call(probe.path, {
            method: probe.method,
            headers: probe.headers,
            body: probe.body,
          });
          ({ status, text } = answer);
          type = answer.headers.get('content-type');
        }
      } catch (error) {
        text = String(error);
      }
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      byKind.set(probe.kind, (byKind.get(probe.kind) ?? 0) + 1);
      const why = check(probe, status, type, text);
      if (why) failures.push({ probe, status, why, answer: text.slice(0, 200) });
    }
  }),
);
const seconds = (performance.now() - started) / 1000;

console.log(`\n## Fuzz: ${probes.length} requests (seed ${SEED}) in ${seconds.toFixed(1)} s\n`);
console.log('| kind | requests |');
console.log('|---|---|');
for (const [kind, count] of [...byKind].sort()) console.log(`| ${kind} | ${count} |`);
console.log('\n| status | answers |');
console.log('|---|---|');
for (const [status, count] of [...byStatus].sort((a, b) => a[0] - b[0]))
  console.log(`| ${status || 'none'} | ${count} |`);
const fiveHundreds = [...byStatus].filter(([s]) => s >= 500).reduce((sum, [, n]) => sum + n, 0);
console.log(
  `\n5xx answers: ${fiveHundreds}; answers breaking the error shape: ${failures.length - fiveHundreds}`,
);
for (const failure of failures.slice(0, 10))
  console.log(
    `- ${failure.why}: ${failure.probe.method} ${JSON.stringify(failure.probe.path).slice(0, 80)} ${JSON.stringify(failure.probe.body ?? failure.probe.raw ?? '').slice(0, 80)} -> ${failure.status} ${failure.answer}`,
  );

await dispatcher.close();
await service.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(failures.length ? 1 : 0);
