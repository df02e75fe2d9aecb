/**
 * Each function as deployed (lib/bundling.ts's buildFunction, the very build `cdk synth` runs:
 * test/infra/bundling.test.ts), started cold in a fresh Node process as Lambda starts it
 * (AWS_LAMBDA_FUNCTION_NAME set, so its dependencies are built at init) and given its typical
 * first request (bin/bench/typical.ts) against the local service: the bytes Node loads at init and
 * for that request, the median time to import and to answer, over `runs` runs interleaved across
 * functions (a busy moment of the machine lands on all of them alike). The answer's time includes
 * the local emulators' round trips, as the first request on Lambda includes AWS's.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ensureQueueWithDlq } from '../../functions/local/resources.js';
import { startLocalService } from '../../functions/local/service.js';
import { type BuiltFunction, buildFunction } from '../../lib/bundling.js';
import { startReceiver } from '../../test/support/webhook-receiver.js';
import { BENCH_SERVICE } from './throughput.js';
import { answeredWell, makeFixtures, TYPICAL } from './typical.js';

const RUNNER = fileURLToPath(new URL('../../test/support/bundle-runner.mjs', import.meta.url));
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

interface Run {
  result: unknown;
  init: string[];
  all: string[];
  importMs: number;
  firstMs: number;
  stdout: string;
}

/** Prints the table; returns each function's bytes at init and median import time. */
export async function bundleTable(handlers: string[], out: string, runs: number) {
  const built: Record<string, BuiltFunction> = {};
  await Promise.all(
    handlers.map(async (name) => {
      built[name] = await buildFunction(name, join(out, name));
    }),
  );
  process.env.LOG_LEVEL ??= 'silent';
  const service = await startLocalService({ ...BENCH_SERVICE, rateLimitPerSecond: 100_000 });
  const receiver = await startReceiver();
  try {
    const sqs = new SQSClient({
      endpoint: service.endpoints.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    // The bundled send functions queue to a queue of their own, which only the bundled consumer reads.
    const queue = await ensureQueueWithDlq(sqs, 'bench-cold-send', {
      maxReceiveCount: 5,
      visibilityTimeoutSeconds: 30,
    });
    const env = {
      ...process.env,
      SEND_QUEUE_URL: queue.queue.url,
      SEND_DEAD_LETTER_QUEUE_URL: queue.dlq.url,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    };
    let events = 0;
    const run = async (name: string, event: unknown, record: boolean): Promise<Run> => {
      const file = join(out, `event-${++events}.json`);
      writeFileSync(file, JSON.stringify(event));
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [RUNNER, built[name]?.outdir ?? '', file, name],
        {
          env: { ...env, AWS_LAMBDA_FUNCTION_NAME: name, BUNDLE_RUNNER_RECORD: String(record) },
          maxBuffer: 16 * 1024 * 1024,
          timeout: 60_000,
        },
      );
      const lines = stdout.trim().split('\n');
      return { ...(JSON.parse(lines.at(-1) as string) as Omit<Run, 'stdout'>), stdout };
    };

    const fx = await makeFixtures(service, {
      receiverUrl: receiver.url,
      requestLogLine: '',
      sendMessage: async () => {
        const sent = await run(
          'send-email',
          await (TYPICAL['send-email'] as (f: unknown) => unknown)(fx),
          false,
        );
        if (!answeredWell(sent.result)) throw new Error(`send-email: ${JSON.stringify(sent.result)}`);
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queue.queue.url,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: 5,
          }),
        );
        const [message] = Messages;
        if (!message?.Body) throw new Error('the bundled send-email queued nothing');
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: queue.queue.url, ReceiptHandle: message.ReceiptHandle }),
        );
        return message.Body;
      },
    });
    // A request-log line as an API function writes it on Lambda (stdout), for the writer.
    const listed = await run(
      'list-emails',
      await (TYPICAL['list-emails'] as (f: unknown) => unknown)(fx),
      false,
    );
    const line = listed.stdout.split('\n').find((l) => l.includes('"log_type":"api_request"'));
    if (!line) throw new Error('list-emails wrote no request-log line');
    fx.requestLogLine = line;

    const bytes = (name: string, files: string[]) => {
      const fn = built[name] as BuiltFunction;
      return files.reduce((total, path) => total + (fn.files.find((f) => f.path === path)?.bytes ?? 0), 0);
    };
    const samples: Record<
      string,
      { importMs: number[]; firstMs: number[]; initBytes: number; firstBytes: number }
    > = {};
    for (let round = 0; round <= runs; round++)
      for (const name of handlers) {
        const typical = TYPICAL[name];
        if (!typical) throw new Error(`${name} has no typical request (bin/bench/typical.ts)`);
        // Round 0 records which files are loaded (module hooks, which slow loading); the rest are timed.
        const r = await run(name, await typical(fx), round === 0);
        if (!answeredWell(r.result, name))
          throw new Error(`${name}'s typical request was answered ${JSON.stringify(r.result).slice(0, 300)}`);
        const s = samples[name] ?? { importMs: [], firstMs: [], initBytes: 0, firstBytes: 0 };
        samples[name] = s;
        if (round === 0) {
          s.initBytes = bytes(name, r.init);
          s.firstBytes = bytes(name, r.all) - s.initBytes;
        } else {
          s.importMs.push(r.importMs);
          s.firstMs.push(r.firstMs);
        }
      }

    console.log(
      `| function | loaded at init | + first request | gzipped | import (median of ${runs}) | first request |`,
    );
    console.log('|---|---|---|---|---|---|');
    const result: Record<string, { bytes: number; importMs: number; firstMs: number }> = {};
    for (const name of handlers) {
      const fn = built[name] as BuiltFunction;
      const s = samples[name] as (typeof samples)[string];
      const gzipped = fn.files
        .filter((f) => f.init)
        .reduce((total, f) => total + gzipSync(readFileSync(join(fn.outdir, f.path))).length, 0);
      result[name] = { bytes: s.initBytes, importMs: median(s.importMs), firstMs: median(s.firstMs) };
      console.log(
        `| ${name} | ${kb(s.initBytes)} | ${s.firstBytes ? kb(s.firstBytes) : '–'} | ${kb(gzipped)} | ${median(s.importMs).toFixed(1)} ms | ${median(s.firstMs).toFixed(1)} ms |`,
      );
    }
    const send = result['send-email'];
    const list = result['list-emails'];
    if (send && list)
      console.log(
        `\nsend-email imports in ${(send.importMs / list.importMs).toFixed(2)} × list-emails' time (budget 1.4 ×).`,
      );
    // A floor to compare with: an empty ES module, imported the same way.
    const empty = join(out, 'empty');
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(empty, 'index.mjs'), 'export const handler = async () => undefined;');
    built.empty = { ...(built['list-emails'] as BuiltFunction), outdir: empty };
    const floor: number[] = [];
    for (let i = 0; i < runs; i++) floor.push((await run('empty', {}, false)).importMs);
    console.log(`(an empty module imports in ${median(floor).toFixed(1)} ms here)`);
    return result;
  } finally {
    await receiver.close();
    await service.stop();
  }
}
