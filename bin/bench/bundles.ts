/**
 * Each function's bundle, built exactly as the stack builds it (lib/bundling.ts's esbuildOptions,
 * byte-identical to the deployed asset: test/infra/bundling.test.ts): its size, gzipped size, the
 * median time to import it in a fresh Node process (runs interleaved across functions, so a busy
 * moment of the machine lands on all of them alike), and its first invocation (building its SDK
 * clients; no network).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildFunction, ENTRY_FILE } from '../../lib/bundling.js';

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const PROBE = `const [file, kind] = process.argv.slice(2);
const t0 = performance.now();
const mod = await import(file);
const t1 = performance.now();
const ctx = { awsRequestId: 'b', getRemainingTimeInMillis: () => 10000, functionName: 'bench' };
const http = { version: '2.0', routeKey: 'GET /v1/emails', rawPath: '/v1/emails', rawQueryString: '', headers: {},
  requestContext: { http: { method: 'GET', path: '/v1/emails' } }, isBase64Encoded: false };
await mod.handler(kind === 'sqs' ? { Records: [] } : http, ctx).catch(() => undefined);
console.log(JSON.stringify({ importMs: t1 - t0, firstCallMs: performance.now() - t1 }));`;

/** Prints the table; returns each function's size and median import time. */
export async function bundleTable(handlers: string[], out: string, runs: number) {
  const probe = join(out, 'probe.mjs');
  writeFileSync(probe, PROBE);
  const built: Record<string, { file: string; bytes: number; gzipped: number }> = {};
  for (const name of handlers) {
    const fn = await buildFunction(name, join(out, name));
    const init = fn.files.filter((f) => f.init).map((f) => readFileSync(join(fn.outdir, f.path)));
    built[name] = {
      file: join(fn.outdir, ENTRY_FILE),
      bytes: fn.initBytes,
      gzipped: init.reduce((total, code) => total + gzipSync(code).length, 0),
    };
  }
  const background = (name: string) =>
    name.startsWith('process-') || ['check-domains', 'sweep-emails', 'deliver-webhooks'].includes(name);
  const env = {
    ...process.env,
    TABLE_NAME: 't',
    SEND_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q',
    SEND_DEAD_LETTER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/dlq',
    CONFIGURATION_SET_NAME: 'c',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    LOG_LEVEL: 'silent',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const samples: Record<string, { importMs: number[]; firstCallMs: number[] }> = {};
  for (let run = 0; run < runs; run++)
    for (const name of handlers) {
      const { importMs, firstCallMs } = JSON.parse(
        execFileSync(process.execPath, [probe, built[name]?.file ?? '', background(name) ? 'sqs' : 'http'], {
          env,
        }).toString(),
      ) as { importMs: number; firstCallMs: number };
      const s = samples[name] ?? { importMs: [], firstCallMs: [] };
      samples[name] = s;
      s.importMs.push(importMs);
      s.firstCallMs.push(firstCallMs);
    }
  console.log(
    `| function | bundle | gzipped | import (median of ${runs}) | first call (client setup, no network) |`,
  );
  console.log('|---|---|---|---|---|');
  const result: Record<string, { bytes: number; importMs: number }> = {};
  for (const name of handlers) {
    const b = built[name] as { bytes: number; gzipped: number };
    const s = samples[name] as { importMs: number[]; firstCallMs: number[] };
    result[name] = { bytes: b.bytes, importMs: median(s.importMs) };
    console.log(
      `| ${name} | ${kb(b.bytes)} | ${kb(b.gzipped)} | ${median(s.importMs).toFixed(1)} ms | ${median(s.firstCallMs).toFixed(1)} ms |`,
    );
  }
  // A floor to compare with: an empty ES module, imported the same way.
  const empty = join(out, 'empty.mjs');
  writeFileSync(empty, 'export const handler = async () => undefined;');
  const floor = Array.from({ length: runs }, () =>
    JSON.parse(execFileSync(process.execPath, [probe, empty, 'http'], { env }).toString()),
  ).map((r: { importMs: number }) => r.importMs);
  console.log(`\n(an empty module imports in ${median(floor).toFixed(1)} ms here)`);
  return result;
}
