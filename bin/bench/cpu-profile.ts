/**
 * Where a V8 CPU profile's time goes (section 9 of `npm run bench`): each sample's time is given
 * to the frame it landed in (self time), and each frame of a built function's files is taken back
 * to its original source through the bundle's source map: a package (`zod`, `@aws-sdk/…`), or a
 * file of the project (`functions/…`). Frames of node's module loader are module loading (V8's
 * compilation of the bundle is `compileSourceTextModule`); a native frame (no URL) counts as the
 * nearest caller that has one.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The parts of a `.cpuprofile` (the inspector's Profiler.Profile) read here. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const CATEGORIES = [
  'compiling modules (V8, compileSourceTextModule)',
  "node's module loader (resolve, read, link, built-ins)",
  "the bundle's code (top level and init work)",
  'garbage collection',
  'Node internals (called by the bundle)',
  'V8, not attributed (program)',
  'idle (waiting for I/O)',
  'the runner itself (and the profiler)',
] as const;
export type Category = (typeof CATEGORIES)[number];
const [COMPILE, LOADER, BUNDLE, GC, NODE, PROGRAM, IDLE, HARNESS] = CATEGORIES;

/** A frame of a bundle file, in its original source (`source` undefined: no mapping there). */
export interface Origin {
  /** Relative to the project (`functions/…`, `node_modules/zod/…`, or `../…` outside it). */
  source?: string;
  /** 1-based. */
  line?: number;
  /** The original name at that position, or a glimpse of the original line. */
  name?: string;
  /** Where `source` is undefined: what the file holds (its packages, most mapped first). */
  holds?: string;
}
/** A frame's origin when `url` is a bundle file (0-based line and column, as V8 gives them). */
export type Locate = (url: string, line: number, column: number) => Origin | undefined;

export interface Summary {
  /** Microseconds from the first sample to the end of the profile. */
  totalUs: number;
  samples: number;
  categories: Record<string, number>;
  /** The bundle's code by package or project file, and Node's by module (`node:tls`). */
  groups: Record<string, number>;
  /** The bundle's functions: `name (source:line)`. */
  functions: Record<string, number>;
}

/** `@aws-sdk/client-sqs`, `zod`, …, or the project file itself. */
export function packageOf(source: string): string {
  const inModules = source.lastIndexOf('node_modules/');
  if (inModules < 0) return source;
  const rest = source.slice(inModules + 'node_modules/'.length);
  return rest.match(/^((?:@[^/]+\/)?[^/]+)/)?.[1] ?? rest;
}

/** The families of section 9's overview: what a package or file of the bundle belongs to. */
export const FAMILIES = [
  'zod',
  'AWS SDK (@aws-sdk, @smithy)',
  'Powertools',
  'middy',
  'the project (functions/, lib/)',
  'other packages',
  'top level of a chunk (not mapped)',
] as const;
export function familyOf(group: string): (typeof FAMILIES)[number] | undefined {
  if (group.startsWith('node:')) return undefined;
  if (group === 'zod' || group.startsWith('zod/')) return 'zod';
  if (group.startsWith('@aws-sdk/') || group.startsWith('@smithy/')) return 'AWS SDK (@aws-sdk, @smithy)';
  if (group.startsWith('@aws-lambda-powertools/')) return 'Powertools';
  if (group.startsWith('@middy/')) return 'middy';
  if (group.startsWith('functions/') || group.startsWith('lib/')) return 'the project (functions/, lib/)';
  if (group.startsWith('(')) return 'top level of a chunk (not mapped)';
  return 'other packages';
}

/** `node:internal/tls/wrap` → `node:tls`, `node:_http_client` → `node:http`. */
export const nodeModule = (url: string) =>
  `node:${url
    .replace(/^node:(internal\/)?/, '')
    .split('/')[0]
    ?.replace(/^_/, '')
    .replace(/_.*/, '')}`;

/** A source as shown: from the package on for dependencies (`zod/v4/core/core.js`). */
const shown = (source: string) => {
  const inModules = source.lastIndexOf('node_modules/');
  return inModules < 0 ? source : source.slice(inModules + 'node_modules/'.length);
};

export function summarize(profile: CpuProfile, locate: Locate): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  // A sample's time: until the next sample (the last: until the end). The time before the first
  // sample is the profiler starting, not the work profiled.
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => {
    at += delta;
    return at;
  });
  profile.samples.forEach((id, i) => {
    const until = times[i + 1] ?? profile.endTime;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, until - (times[i] ?? until)));
  });

  const summary: Summary = {
    totalUs: Math.max(0, profile.endTime - (times[0] ?? profile.endTime)),
    samples: profile.samples.length,
    categories: Object.fromEntries(CATEGORIES.map((c) => [c, 0])),
    groups: {},
    functions: {},
  };
  const add = (record: Record<string, number>, key: string, us: number) => {
    record[key] = (record[key] ?? 0) + us;
  };
  const ancestors = function* (id: number) {
    for (let node = byId.get(id); node; node = byId.get(parent.get(node.id) ?? -1)) yield node;
  };
  const isLoader = (url: string, functionName: string) =>
    url.startsWith('node:internal/modules/') || functionName === 'compileSourceTextModule';

  for (const [id, us] of selfUs) {
    if (us === 0) continue;
    let category: Category | undefined;
    for (const node of ancestors(id)) {
      const { functionName, url, lineNumber, columnNumber } = node.callFrame;
      if (!url) {
        if (functionName === '(garbage collector)') category = GC;
        else if (functionName === '(idle)') category = IDLE;
        else if (functionName === '(program)' || functionName === '(root)') category = PROGRAM;
        // Another native frame: its caller decides.
        if (category) break;
        continue;
      }
      // The inspector's own work (the profiler's session) is the runner's.
      if (url === 'node:inspector' || url.startsWith('node:internal/inspector')) category = HARNESS;
      else if (functionName === 'compileSourceTextModule') category = COMPILE;
      else if (isLoader(url, functionName)) category = category ?? LOADER;
      else if (url.startsWith('node:')) {
        // Node's own code: the loader's when the loader called it (reading a file, a built-in
        // module's own top level), else the caller's call into Node.
        for (const above of ancestors(id)) {
          if (isLoader(above.callFrame.url, above.callFrame.functionName)) {
            category = LOADER;
            break;
          }
          if (above.callFrame.url && !above.callFrame.url.startsWith('node:')) break;
        }
        if (!category) {
          category = NODE;
          add(summary.groups, nodeModule(url), us);
        }
      } else {
        const origin = locate(url, lineNumber, columnNumber);
        if (!origin) category = HARNESS;
        else {
          category = BUNDLE;
          const file = url.slice(url.lastIndexOf('/') + 1);
          if (origin.source === undefined) {
            const what = lineNumber === 0 && columnNumber === 0 ? 'top-level code' : 'unmapped code';
            add(summary.groups, `(${what} of ${file}${origin.holds ? `: ${origin.holds}` : ''})`, us);
            add(summary.functions, `(${what}) ${file}`, us);
          } else {
            add(summary.groups, packageOf(origin.source), us);
            const name = origin.name || functionName || '(anonymous)';
            add(summary.functions, `${name} (${shown(origin.source)}:${origin.line ?? '?'})`, us);
          }
        }
      }
      break;
    }
    add(summary.categories, category ?? PROGRAM, us);
  }
  return summary;
}

/**
 * Frames of the files in `dir` (a function built with external source maps), taken to their
 * sources with node's SourceMap; sources relative to `root` (the project).
 */
export function sourceMapLocator(dir: string, root: string): Locate {
  const prefix = `${pathToFileURL(resolve(dir)).href}/`;
  const maps = new Map<string, { map: SourceMap; base: string } | null>();
  const lines = new Map<string, string[] | null>();
  const lineOf = (file: string, line: number) => {
    if (!lines.has(file)) {
      try {
        lines.set(file, readFileSync(file, 'utf8').split('\n'));
      } catch {
        lines.set(file, null);
      }
    }
    return lines.get(file)?.[line];
  };
  // A file's packages, by how many of its sources each has (the top level of a chunk is theirs).
  const held = new Map<string, string>();
  const holds = (url: string, map: SourceMap, base: string) => {
    let text = held.get(url);
    if (text === undefined) {
      const counts: Record<string, number> = {};
      for (const source of (map.payload as { sources?: string[] }).sources ?? []) {
        const pkg = packageOf(relative(root, resolve(base, source)).split('\\').join('/'));
        counts[pkg] = (counts[pkg] ?? 0) + 1;
      }
      const all = top(counts, Number.POSITIVE_INFINITY).map(([pkg]) => pkg);
      text = `${all.slice(0, 3).join(', ')}${all.length > 3 ? ', …' : ''}`;
      held.set(url, text);
    }
    return text;
  };
  return (url, line, column) => {
    if (!url.startsWith(prefix)) return undefined;
    if (!maps.has(url)) {
      const file = fileURLToPath(url);
      try {
        maps.set(url, {
          map: new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))),
          base: dirname(file),
        });
      } catch {
        maps.set(url, null);
      }
    }
    const found = maps.get(url);
    if (!found || line < 0) return {};
    if (line === 0 && column === 0) return { holds: holds(url, found.map, found.base) };
    const entry = found.map.findEntry(line, column) as {
      originalSource?: string;
      originalLine?: number;
      name?: string;
    };
    if (!entry.originalSource) return {};
    const file = resolve(found.base, entry.originalSource);
    // Where the map names no one (a method, a function assigned to a name), the source line does.
    const glimpse = () => {
      const text = lineOf(file, entry.originalLine ?? -1)?.trim();
      if (!text) return undefined;
      return nameIn(text) ?? `«${text.length > 40 ? `${text.slice(0, 40)}…` : text}»`;
    };
    return {
      source: relative(root, file).split('\\').join('/'),
      line: (entry.originalLine ?? 0) + 1,
      name: entry.name || glimpse(),
    };
  };
}

/** The name a line of source declares: `function f(`, `class C`, `const x =`, a method `m(…) {`. */
export function nameIn(text: string): string | undefined {
  const declared = text.match(
    /^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*|class\s+|(?:const|let|var)\s+)([\w$]+)/,
  );
  if (declared) return declared[1];
  const method = text.match(/^(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?(#?[\w$]+)\s*\([^)]*\)?\s*\{?$/);
  if (method && !['if', 'for', 'while', 'switch', 'catch', 'return'].includes(method[1] ?? ''))
    return method[1];
  const assigned = text.match(/^(?:[\w$]+\.)*([\w$]+)\s*=\s*(?:async\s*)?(?:function|\(|[\w$]+\s*=>)/);
  return assigned?.[1];
}

/** Each row's median over the runs (a row absent from a run counts 0 there). */
export function medianSummary(runs: Summary[]): Summary {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length / 2;
    return sorted.length % 2
      ? (sorted[Math.floor(mid)] ?? 0)
      : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  };
  const rows = (pick: (s: Summary) => Record<string, number>) => {
    const keys = new Set(runs.flatMap((s) => Object.keys(pick(s))));
    return Object.fromEntries([...keys].map((key) => [key, median(runs.map((s) => pick(s)[key] ?? 0))]));
  };
  return {
    totalUs: median(runs.map((s) => s.totalUs)),
    samples: median(runs.map((s) => s.samples)),
    categories: rows((s) => s.categories),
    groups: rows((s) => s.groups),
    functions: rows((s) => s.functions),
  };
}

/** The `n` largest rows, largest first. */
export const top = (record: Record<string, number>, n: number) =>
  Object.entries(record)
    .filter(([, us]) => us > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n);
