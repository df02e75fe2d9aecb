import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CATEGORIES,
  type CpuProfile,
  familyOf,
  medianSummary,
  nameIn,
  nodeModule,
  packageOf,
  type Summary,
  sourceMapLocator,
  summarize,
} from '../../bin/bench/cpu-profile.js';

const [COMPILE, LOADER, BUNDLE, GC, NODE, PROGRAM, IDLE, HARNESS] = CATEGORIES;

// A project of two sources, a dependency and a file of the project, bundled by esbuild with an
// external source map as section 9 builds the functions.
let root = '';
let out = '';
let bundle = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  mkdirSync(join(root, 'node_modules/@acme/heavy'), { recursive: true });
  mkdirSync(join(root, 'functions'));
  writeFileSync(
    join(root, 'node_modules/@acme/heavy/package.json'),
    '{"name":"@acme/heavy","main":"index.js"}',
  );
  writeFileSync(
    join(root, 'node_modules/@acme/heavy/index.js'),
    'export function heavy(n) {\n  let s = 0;\n  for (let i = 0; i < n; i++) s += i;\n  return s;\n}\n',
  );
  writeFileSync(
    join(root, 'functions/app.ts'),
    "import { heavy } from '@acme/heavy';\nexport function handle(n: number) {\n  return heavy(n) + 1;\n}\n",
  );
  out = join(root, 'out');
  await build({
    absWorkingDir: root,
    entryPoints: { index: join(root, 'functions/app.ts') },
    bundle: true,
    format: 'esm',
    platform: 'node',
    outdir: out,
    outExtension: { '.js': '.mjs' },
    sourcemap: 'external',
    sourcesContent: false,
    logLevel: 'error',
  });
  bundle = readFileSync(join(out, 'index.mjs'), 'utf8');
});

/** Where `text` starts in the bundle, 0-based, as V8 reports a function's position. */
const at = (text: string) => {
  const before = bundle.slice(0, bundle.indexOf(text));
  const lines = before.split('\n');
  return { lineNumber: lines.length - 1, columnNumber: (lines.at(-1) ?? '').length };
};

/** A profile: `stack` per node (its parent first), then one sample per entry of `samples`, 100 µs each. */
function profile(
  frames: Record<number, { parent: number; name: string; url: string; line?: number; column?: number }>,
  samples: number[],
): CpuProfile {
  const nodes: CpuProfile['nodes'] = [
    { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 }, children: [] },
  ];
  for (const [id, f] of Object.entries(frames))
    nodes.push({
      id: Number(id),
      callFrame: { functionName: f.name, url: f.url, lineNumber: f.line ?? -1, columnNumber: f.column ?? -1 },
      children: [],
    });
  for (const [id, f] of Object.entries(frames))
    nodes.find((n) => n.id === f.parent)?.children?.push(Number(id));
  // The first delta is the profiler starting (1 ms), before any work: not counted.
  return {
    nodes,
    startTime: 0,
    endTime: 1000 + 100 * samples.length,
    samples,
    timeDeltas: samples.map((_, i) => (i === 0 ? 1000 : 100)),
  };
}

describe('npm run bench, section 9: where a cold start goes (bin/bench/cpu-profile.ts)', () => {
  it("splits a profile's samples by category, package, project file and function, through the source map", () => {
    const url = pathToFileURL(join(out, 'index.mjs')).href;
    const heavy = at('function heavy');
    const handle = at('function handle');
    const p = profile(
      {
        2: { parent: 1, name: '(garbage collector)', url: '' },
        3: { parent: 1, name: '(idle)', url: '' },
        4: { parent: 1, name: 'compileSourceTextModule', url: 'node:internal/modules/esm/utils', line: 343 },
        5: { parent: 4, name: 'compile', url: '' }, // native: its caller's
        6: { parent: 1, name: '', url, line: 0, column: 0 }, // the bundle's top level
        7: { parent: 6, name: 'handle', url, line: handle.lineNumber, column: handle.columnNumber + 9 },
        8: { parent: 7, name: 'heavy', url, line: heavy.lineNumber, column: heavy.columnNumber + 9 },
        9: { parent: 8, name: 'JSONParse', url: '' }, // native, called by heavy: heavy's
        10: { parent: 7, name: 'readFileSync', url: 'node:fs', line: 400 }, // Node, called by the bundle
        11: { parent: 1, name: 'getSource', url: 'node:internal/modules/esm/load', line: 41 },
        12: { parent: 11, name: 'readFile', url: 'node:internal/fs/promises', line: 1239 }, // the loader's
        13: { parent: 1, name: 'main', url: 'file:///elsewhere/runner.mjs', line: 3 },
        15: { parent: 13, name: 'post', url: 'node:inspector', line: 111 }, // the profiler's session
        14: { parent: 1, name: '(program)', url: '' },
      },
      [2, 3, 5, 6, 7, 8, 8, 9, 10, 12, 13, 14, 15],
    );
    const s = summarize(p, sourceMapLocator(out, root));
    expect(s.totalUs).toBe(1300);
    expect(s.samples).toBe(13);
    expect(s.categories).toEqual({
      [COMPILE]: 100,
      [LOADER]: 100,
      [BUNDLE]: 500,
      [GC]: 100,
      [NODE]: 100,
      [PROGRAM]: 100,
      [IDLE]: 100,
      [HARNESS]: 200,
    });
    expect(s.groups).toEqual({
      '@acme/heavy': 300,
      'functions/app.ts': 100,
      '(top-level code of index.mjs: @acme/heavy, functions/app.ts)': 100,
      'node:fs': 100,
    });
    expect(s.functions).toEqual({
      'heavy (@acme/heavy/index.js:1)': 300,
      'handle (functions/app.ts:2)': 100,
      '(top-level code) index.mjs': 100,
    });
  });

  it('takes each row as its median over the runs, a row missing from a run counting 0', () => {
    const run = (totalUs: number, zod: number, extra?: number): Summary => ({
      totalUs,
      samples: totalUs / 100,
      categories: { [BUNDLE]: zod + (extra ?? 0) },
      groups: { zod, ...(extra ? { mime: extra } : {}) },
      functions: {},
    });
    const m = medianSummary([run(1000, 300), run(5000, 4000, 900), run(1200, 200), run(1100, 250)]);
    expect(m.totalUs).toBe(1150);
    expect(m.groups).toEqual({ zod: 275, mime: 0 });
  });

  it('puts each package or file in its family, Node modules in none', () => {
    expect(familyOf('zod')).toBe('zod');
    expect(familyOf('@smithy/core')).toBe('AWS SDK (@aws-sdk, @smithy)');
    expect(familyOf('@aws-sdk/client-sesv2')).toBe('AWS SDK (@aws-sdk, @smithy)');
    expect(familyOf('@aws-lambda-powertools/logger')).toBe('Powertools');
    expect(familyOf('functions/http/middleware.ts')).toBe('the project (functions/, lib/)');
    expect(familyOf('(top-level code of index.mjs: zod)')).toBe('top level of a chunk (not mapped)');
    expect(familyOf('mime')).toBe('other packages');
    expect(familyOf('node:http')).toBeUndefined();
  });

  it('names packages, Node modules and the functions a source line declares', () => {
    expect(packageOf('../main/node_modules/@aws-sdk/core/dist-es/index.js')).toBe('@aws-sdk/core');
    expect(packageOf('node_modules/a/node_modules/zod/v4/core/core.js')).toBe('zod');
    expect(packageOf('functions/http/middleware.ts')).toBe('functions/http/middleware.ts');
    expect(nodeModule('node:internal/tls/wrap')).toBe('node:tls');
    expect(nodeModule('node:_http_client')).toBe('node:http');
    expect(nodeModule('node:zlib')).toBe('node:zlib');
    expect(nameIn('export function heavy(n) {')).toBe('heavy');
    expect(nameIn('export const $ZodObject = /*@__PURE__*/ core.$constructor(')).toBe('$ZodObject');
    expect(nameIn('async signRequest(requestToSign, { signingDate } = {}) {')).toBe('signRequest');
    expect(nameIn('if (x) {')).toBeUndefined();
    expect(nameIn('return (next) => async (args) => {')).toBeUndefined();
  });
});
