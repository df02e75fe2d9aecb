/**
 * Where a cold start's time goes (section 9 of `npm run bench`): each function built as deployed
 * (lib/bundling.ts's options: the code, and the `.map` files beside it), started cold in a fresh
 * Node process as section 1 starts it, with V8's sampling profiler on (bin/bench/profile-runner.mjs):
 * one profile of init (the import of index.mjs) and one of the first, typical request
 * (bin/bench/typical.ts) against the local service. Each profile's samples are split by
 * bin/bench/cpu-profile.ts into module compilation, node's loader, the bundle's own code by package
 * or project file (through the source maps), garbage collection and Node's
 * internals; each row is the median over `runs` runs, interleaved across functions.
 *
 * The profiler slows what it samples (a sample every ~50 µs asked, fewer given): the times are
 * larger than section 1's, their shares are what to read.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildOptions } from '../../lib/bundling.js';
import { startColdService } from './cold.js';
import {
  CATEGORIES,
  type CpuProfile,
  FAMILIES,
  familyOf,
  type Locate,
  medianSummary,
  type Summary,
  sourceMapLocator,
  summarize,
  top,
} from './cpu-profile.js';
import { answeredWell, typicalOf } from './typical.js';

const RUNNER = fileURLToPath(new URL('./profile-runner.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DEFAULT_PROFILED = ['list-emails', 'send-email', 'process-send-queue', 'get-email'];

const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;
const share = (us: number, total: number) => (total > 0 ? `${Math.round((100 * us) / total)}%` : '–');
const cell = (us: number, total: number) => (us >= 50 ? `${ms(us)} (${share(us, total)})` : '–');

/** Prints the section: an overview of every function's init, then each function's detail. */
export async function profileTable(names: string[], out: string, runs: number, rows = 12) {
  const dirs = new Map<string, Promise<string>>();
  // The deployed build's options, external source maps included (no sources inside: they are on
  // disk), each map's sources left relative to it as esbuild writes them (the locator resolves them).
  const dirOf = (name: string) => {
    let dir = dirs.get(name);
    if (!dir) {
      const outdir = join(out, 'profiled', name);
      dir = build(buildOptions(name, outdir)).then(() => outdir);
      dirs.set(name, dir);
    }
    return dir;
  };
  await Promise.all(names.map(dirOf));
  const locators = new Map<string, Locate>();
  const cold = await startColdService(out, dirOf);
  const samples: Record<
    string,
    { init: Summary[]; first: Summary[]; importMs: number[]; firstMs: number[] }
  > = {};
  try {
    let runId = 0;
    // Round 0 warms the disk cache and the local service; the others are counted.
    for (let round = 0; round <= runs; round++)
      for (const name of names) {
        const typical = typicalOf(name);
        if (!typical) throw new Error(`${name} has no typical request (bin/bench/typical.ts)`);
        const dir = await dirOf(name);
        const profiles = join(out, 'profiles', `${name}-${++runId}`);
        mkdirSync(profiles, { recursive: true });
        const stdout = await cold.start(RUNNER, dir, name, await typical(cold.fx), { args: [profiles] });
        const r = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
          result: unknown;
          importMs: number;
          firstMs: number;
        };
        if (!answeredWell(r.result, name))
          throw new Error(`${name}'s typical request was answered ${JSON.stringify(r.result).slice(0, 300)}`);
        if (round === 0) continue;
        let locate = locators.get(name);
        if (!locate) {
          locate = sourceMapLocator(dir, ROOT);
          locators.set(name, locate);
        }
        const read = (file: string) =>
          summarize(JSON.parse(readFileSync(join(profiles, file), 'utf8')) as CpuProfile, locate);
        const s = samples[name] ?? { init: [], first: [], importMs: [], firstMs: [] };
        samples[name] = s;
        s.init.push(read('init.cpuprofile'));
        s.first.push(read('first.cpuprofile'));
        s.importMs.push(r.importMs);
        s.firstMs.push(r.firstMs);
      }
  } finally {
    await cold.close();
  }

  const medians = Object.fromEntries(
    names.map((name) => {
      const s = samples[name] as (typeof samples)[string];
      return [name, { init: medianSummary(s.init), first: medianSummary(s.first) }];
    }),
  );
  const cpu = (s: Summary) => s.totalUs - (s.categories['idle (waiting for I/O)'] ?? 0);
  const [compile, loader, bundle, gc, node] = CATEGORIES;

  console.log(`Init, median of ${runs} profiled cold starts (ms, and share of the sampled time):\n`);
  console.log(`| function | sampled | ${[compile, loader, bundle, gc, node].join(' | ')} | other |`);
  console.log(`|---|---|${'---|'.repeat(6)}`);
  for (const name of names) {
    const s = medians[name]?.init as Summary;
    const main = [compile, loader, bundle, gc, node].map((c) => s.categories[c] ?? 0);
    // The rest (V8 unattributed, idle, the runner and the profiler), each row's median summed.
    const other = CATEGORIES.filter(
      (c) => !([compile, loader, bundle, gc, node] as string[]).includes(c),
    ).reduce((sum, c) => sum + (s.categories[c] ?? 0), 0);
    console.log(
      `| ${name} | ${ms(s.totalUs)} | ${[...main, other].map((us) => cell(us, s.totalUs)).join(' | ')} |`,
    );
  }

  console.log(
    `\nThe bundle's code at init, by family (self time; the per-run medians of each package, summed):\n`,
  );
  console.log(`| function | ${FAMILIES.join(' | ')} |`);
  console.log(`|---|${'---|'.repeat(FAMILIES.length)}`);
  for (const name of names) {
    const s = medians[name]?.init as Summary;
    const byFamily: Record<string, number> = {};
    for (const [group, us] of Object.entries(s.groups)) {
      const family = familyOf(group);
      if (family) byFamily[family] = (byFamily[family] ?? 0) + us;
    }
    console.log(`| ${name} | ${FAMILIES.map((f) => cell(byFamily[f] ?? 0, s.totalUs)).join(' | ')} |`);
  }

  for (const name of names) {
    const { init, first } = medians[name] as { init: Summary; first: Summary };
    console.log(
      `\n### ${name}: init ${ms(init.totalUs)} sampled (${init.samples} samples), first request ${ms(cpu(first))} of CPU in ${ms(first.totalUs)}\n`,
    );
    console.log('| where the time goes | init | first request |');
    console.log('|---|---|---|');
    for (const category of CATEGORIES) {
      const a = init.categories[category] ?? 0;
      const b = first.categories[category] ?? 0;
      if (a >= 50 || b >= 50)
        console.log(`| ${category} | ${cell(a, init.totalUs)} | ${cell(b, first.totalUs)} |`);
    }
    console.log(`| **total sampled** | ${ms(init.totalUs)} | ${ms(first.totalUs)} |`);

    const both: Record<string, number> = {};
    for (const [key, us] of Object.entries(init.groups)) both[key] = us;
    for (const [key, us] of Object.entries(first.groups)) both[key] = (both[key] ?? 0) + us;
    console.log(
      `\nSelf time by package or project file (the bundle's code) and by Node module (Node's internals), top ${rows}:\n`,
    );
    console.log('| package, file or Node module | init | first request |');
    console.log('|---|---|---|');
    for (const [key] of top(both, rows))
      console.log(
        `| ${key} | ${cell(init.groups[key] ?? 0, init.totalUs)} | ${cell(first.groups[key] ?? 0, first.totalUs)} |`,
      );

    for (const [label, s] of [
      ['init', init],
      ['the first request', first],
    ] as const) {
      console.log(`\nFunctions by self time, ${label} (top ${rows}):\n`);
      console.log('| function (original source:line) | self |');
      console.log('|---|---|');
      for (const [key, us] of top(s.functions, rows))
        console.log(`| ${key.replaceAll('|', '\\|')} | ${ms(us)} |`);
    }
  }
  const medianOf = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  console.log(
    `\n(wall time with the profiler on, median: ${names
      .map((name) => {
        const s = samples[name] as (typeof samples)[string];
        return `${name} import ${medianOf(s.importMs).toFixed(1)} ms, first request ${medianOf(s.firstMs).toFixed(1)} ms`;
      })
      .join('; ')})`,
  );
}
