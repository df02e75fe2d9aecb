/**
 * Each function as deployed (lib/bundling.ts's buildFunction, the very build `cdk synth` runs:
 * test/infra/bundling.test.ts), started cold in a fresh Node process as Lambda starts it
 * (AWS_LAMBDA_FUNCTION_NAME set, so its dependencies are built at init) and given its typical
 * first request (bin/bench/typical.ts) against the local service: the bytes Node loads at init and
 * for that request, the median time to import and to answer, over `runs` runs interleaved across
 * functions (a busy moment of the machine lands on all of them alike). The answer's time includes
 * the local emulators' round trips, as the first request on Lambda includes AWS's.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { budgetOf, SEND_IMPORT_RATIO } from '../../lib/budgets.js';
import { type BuiltFunction, buildFunction, buildFunctions } from '../../lib/bundling.js';
import { BUNDLE_RUNNER, startColdService } from './cold.js';
import { answeredWell, typicalOf } from './typical.js';

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
  const built: Record<string, BuiltFunction> = await buildFunctions(handlers, out);
  // send-email and list-emails make the fixtures of others: built too when not measured.
  const dirOf = async (name: string) => {
    built[name] ??= await buildFunction(name, join(out, name));
    return built[name].outdir;
  };
  const cold = await startColdService(out, dirOf);
  try {
    const fx = cold.fx;
    const run = async (name: string, event: unknown, record: boolean): Promise<Run> => {
      const stdout = await cold.start(BUNDLE_RUNNER, built[name]?.outdir ?? '', name, event, {
        env: { BUNDLE_RUNNER_RECORD: String(record) },
      });
      const lines = stdout.trim().split('\n');
      return { ...(JSON.parse(lines.at(-1) as string) as Omit<Run, 'stdout'>), stdout };
    };

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
        const typical = typicalOf(name);
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
      `| function | loaded at init | budget | + first request | gzipped | source maps, gzipped | import (median of ${runs}) | first request |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const result: Record<string, { bytes: number; importMs: number; firstMs: number }> = {};
    for (const name of handlers) {
      const fn = built[name] as BuiltFunction;
      const s = samples[name] as (typeof samples)[string];
      const gzipped = fn.files
        .filter((f) => f.init)
        .reduce((total, f) => total + gzipSync(readFileSync(join(fn.outdir, f.path))).length, 0);
      // Deployed beside the code and read only when an error is logged: the asset's size, not the cold start's.
      const maps = fn.files.reduce(
        (total, f) => total + gzipSync(readFileSync(join(fn.outdir, `${f.path}.map`))).length,
        0,
      );
      result[name] = { bytes: s.initBytes, importMs: median(s.importMs), firstMs: median(s.firstMs) };
      const budget = budgetOf(name);
      const within = s.initBytes <= budget ? '' : ' **over**';
      console.log(
        `| ${name} | ${kb(s.initBytes)} | ${kb(budget)}${within} | ${s.firstBytes ? kb(s.firstBytes) : '–'} | ${kb(gzipped)} | ${kb(maps)} | ${median(s.importMs).toFixed(1)} ms | ${median(s.firstMs).toFixed(1)} ms |`,
      );
    }
    const send = result['send-email'];
    const list = result['list-emails'];
    if (send && list)
      console.log(
        `\nsend-email imports in ${(send.importMs / list.importMs).toFixed(2)} × list-emails' time (budget ${SEND_IMPORT_RATIO} ×${send.importMs / list.importMs > SEND_IMPORT_RATIO ? ': **over**' : ''}).`,
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
    await cold.close();
  }
}
