import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Metafile, type Plugin } from 'esbuild';
import { pureSdkSchemas } from './bundling/pure-schemas.js';

/**
 * How every function is bundled: esbuild's JavaScript API, minified ESM for Node 22, the AWS SDK
 * bundled (not taken from the runtime) so it is tree-shaken to the commands each function uses,
 * split so that what a function loads only on first use (`await import(…)`) is a chunk of its own,
 * loaded when a request needs it. The stack (lib/function-code.ts, through `cdk synth`), the
 * benchmark (bin/bench/bundles.ts) and the tests of built bundles all call `buildFunction`, so
 * what is measured and tested is what is deployed.
 */
export const NODE_TARGET = 'node22';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const shim = (file: string) => fileURLToPath(new URL(`./bundling/${file}`, import.meta.url));

/** The handler module of a function (its name in functions/catalog.ts). */
export const handlerEntry = (name: string) => `${ROOT}functions/handlers/${name}.ts`;

/**
 * SDK modules every bundle takes from lib/bundling/ instead, each cut to what a function on
 * Lambda runs (each file says why it is safe). test/unit/bundling.test.ts fails when the SDK
 * imports a name a stand-in does not export, or when a stand-in stops behaving as the module it
 * replaces; test/e2e/bundles.test.ts runs the built bundles against the local emulators.
 *
 * - the default credential chain (SSO, ini files, STS, process, web identity, IMDS: 100+ KB) by
 *   the environment variables Lambda sets, or its container endpoint;
 * - event streams (no operation the functions call has one; ~15 KB, and the SDK's dynamic import
 *   of them);
 * - the endpoint-discovery cache's LRU (mnemonist, 7 KB), by a Map.
 */
export const ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': shim('credentials-from-env.ts'),
  '@smithy/core/event-streams': shim('no-event-streams.ts'),
  '@aws-sdk/endpoint-cache': shim('endpoint-cache.ts'),
};

/**
 * Warnings made errors: an import esbuild can tell will be undefined (a name a stand-in lacks, read
 * through a namespace) fails the build instead of failing on Lambda. A missing named import
 * already does.
 */
export const LOG_OVERRIDES: Readonly<Record<string, 'error'>> = { 'import-is-undefined': 'error' };

// ESM output: some dependencies still call require(); give them one (in each file of the bundle).
const BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

/** The file Lambda loads (the function's handler is `index.handler`). */
export const ENTRY_FILE = 'index.mjs';

/**
 * Islands: modules a function loads with `import()` that are bundled on their own, each with its
 * own copy of what it imports, instead of as a chunk of the function's build. esbuild splits by
 * file: a file the function's init reaches through any static import (even one tree-shaking
 * empties, such as a package's index) stays in the init chunks, with all the code any chunk needs
 * of it. So a chunk with an SDK client would leave its share of the SDK's common files (the
 * REST-XML protocol, checksums, streams: ~35 KB for S3) in every cold start. An island leaves
 * nothing there; the price is a second copy of those files, loaded only with it.
 *
 * An island holds no state the function shares: its own logger, its own client plugins (the local
 * twin's, which deployed functions do not have). Locally and in tests it is an ordinary module.
 */
export const ISLANDS: Readonly<Record<string, string>> = {
  'functions/adapters/s3/content-store-island.ts': 'island-content-store',
  'functions/adapters/sqs/email-queue-island.ts': 'island-email-queue',
  'functions/adapters/sqs/delivery-queue-island.ts': 'island-delivery-queue',
  'functions/adapters/sqs/audience-cleanup-island.ts': 'island-audience-cleanup',
  'functions/adapters/sqs/broadcast-fanout-island.ts': 'island-broadcast-fanout',
  'functions/adapters/dynamodb/sender-check-island.ts': 'island-sender-check',
};

/** Resolves `import()` of an island to its own bundle, beside the function's files. */
const islands = (found: Set<string>): Plugin => ({
  name: 'islands',
  setup(build) {
    build.onResolve({ filter: /^\./ }, ({ path, importer, kind }) => {
      if (kind !== 'dynamic-import') return undefined;
      const source = relative(ROOT, resolve(dirname(importer), path)).replace(/\.js$/, '.ts');
      const island = ISLANDS[source.split('\\').join('/')];
      if (!island) return undefined;
      found.add(source);
      // Every file of a build is in one directory (chunkNames below), so this path holds from any.
      return { path: `./${island}.mjs`, external: true };
    });
  },
});

/**
 * The functions that build the OpenAPI document, and so load every route's schemas (each route's
 * declaration names its schemas with `import()`, loaded on demand: shared/route.ts).
 */
export const BUILD_THE_DOCUMENT: ReadonlySet<string> = new Set(['get-openapi', 'get-api-reference']);

/**
 * Every other function leaves the declarations' schema imports out of its build. Its handler
 * imports its own route's declaration, and esbuild would bundle every `import()` that declaration
 * names: the answers' schemas, and the send body's JSON Schema with zod's JSON Schema code. A chunk
 * loaded on first use still leaves in the init chunks what it needs of any file the init reaches
 * (zod's core, here: 20 KB of zod's JSON Schema code in list-emails' cold start). Such an import is
 * replaced by a module that throws, never loaded: no function but the document's asks a declaration
 * for its schemas (the middleware reads only its permission, body and logging). A build of another
 * function that reaches the document fails, rather than deploy a document without schemas.
 */
const routeSchemasLeftOut = (name: string): Plugin => ({
  name: 'route-schemas-left-out',
  setup(build) {
    const project = (file: string) => relative(ROOT, file).split('\\').join('/');
    build.onResolve({ filter: /^\./ }, ({ path, importer, kind }) => {
      const target = project(resolve(dirname(importer), path)).replace(/\.js$/, '.ts');
      if (target === 'functions/api-reference/document.ts')
        throw new Error(
          `${name} builds the OpenAPI document: add it to BUILD_THE_DOCUMENT (lib/bundling.ts)`,
        );
      if (kind !== 'dynamic-import' || !/^functions\/[\w-]+\/routes\.ts$/.test(project(importer)))
        return undefined;
      return { path: 'route-schemas', namespace: 'left-out' };
    });
    build.onLoad({ filter: /.*/, namespace: 'left-out' }, () => ({
      contents:
        'throw new Error("a route\'s schemas are loaded only by the functions that build the OpenAPI document (lib/bundling.ts)");',
      loader: 'js',
    }));
  },
});

/**
 * One function's build, to `outdir`: `index.mjs` and, where it loads code on first use, the chunks
 * beside it, named by content hash, and its islands. Paths are relative to the project (the build runs from its
 * root whatever the caller's directory), so the same sources give the same bytes on any machine.
 */
export function buildOptions(name: string, outdir: string, found = new Set<string>()): BuildOptions {
  return {
    ...common(outdir),
    entryPoints: { index: handlerEntry(name) },
    splitting: true,
    chunkNames: '[name]-[hash]',
    plugins: [
      pureSdkSchemas,
      islands(found),
      ...(BUILD_THE_DOCUMENT.has(name) ? [] : [routeSchemasLeftOut(name)]),
    ],
  };
}

/**
 * A long-running program's build (the SMTP relay's container: lib/smtp-relay-image.ts): one file,
 * `index.mjs` with its map, from `entry` (a path in the project), with the functions' options and
 * aliases (its credentials come from the task's container endpoint, which the stand-in reads).
 */
export function programBuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    ...common(outdir),
    entryPoints: { index: resolve(ROOT, entry) },
    plugins: [pureSdkSchemas, routeSchemasLeftOut(entry)],
  };
}

/** What every build shares: the function's, and each island's. */
function common(outdir: string): BuildOptions {
  return {
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: NODE_TARGET,
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: BANNER },
    alias: { ...ALIASES },
    logOverride: { ...LOG_OVERRIDES },
    outdir,
    outExtension: { '.js': '.mjs' },
    // A map beside each file, named by no comment in it: read only when an error is logged
    // (functions/observability/source-maps.ts), never by Node at load. Without the sources' text:
    // a frame names its file and line, which the repository at the deployed commit shows.
    sourcemap: 'external',
    sourcesContent: false,
    plugins: [pureSdkSchemas],
    metafile: true,
    logLevel: 'error',
  };
}

/** A built function: its files, and how much of it Node loads at init and on first use. */
export interface BuiltFunction {
  readonly name: string;
  readonly outdir: string;
  /** Every file of code written, relative to `outdir`, with its size in bytes (its map aside). */
  readonly files: ReadonlyArray<{ path: string; bytes: number; init: boolean }>;
  /** Bytes of the source maps beside the code: deployed, never loaded unless an error is logged. */
  readonly mapBytes: number;
  /** Bytes Node loads when it imports `index.mjs`: the entry and the chunks it imports statically. */
  readonly initBytes: number;
  /** Bytes of every file: init, and every chunk loaded on first use. */
  readonly totalBytes: number;
  readonly metafile: Metafile;
}

/** The files a build loads at init: the entry and its static imports, transitively. */
export function initFiles(metafile: Metafile, outdir: string): Set<string> {
  const rel = outputPath(outdir);
  const byPath = new Map(Object.entries(metafile.outputs).map(([path, out]) => [rel(path), out]));
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imported of byPath.get(path)?.imports ?? [])
      if (imported.kind === 'import-statement' && !imported.external) visit(rel(imported.path));
  };
  visit(ENTRY_FILE);
  return seen;
}

/** A metafile's output path (relative to the project) as a path inside `outdir`. */
const outputPath = (outdir: string) => (path: string) =>
  relative(resolve(outdir), resolve(ROOT, path)).split('\\').join('/');

/**
 * Where esbuild is told a function's build goes, though it writes nothing there (`write: false`):
 * one place in the project, so what it works out from paths relative to its output is the same
 * wherever the build is then written. That is the source maps' sources, and with them the chunks'
 * names, whose content hash covers their maps: built into a temporary directory, a function's
 * chunks were named differently by every directory.
 */
const buildDir = (name: string) => join(ROOT, '.build', name);

/** Builds one function into `outdir` (created; existing files of the same names are replaced). */
export async function buildFunction(name: string, outdir: string): Promise<BuiltFunction> {
  const at = buildDir(name);
  const found = new Set<string>();
  const result = await build({ ...buildOptions(name, at, found), write: false });
  const metafile = result.metafile as Metafile;
  const written = [...result.outputFiles];
  // Each island its code still loads after tree-shaking, bundled whole (no splitting) beside it.
  const loaded = new Set(
    Object.values(metafile.outputs).flatMap((out) =>
      out.imports.filter((i) => i.external && i.kind === 'dynamic-import').map((i) => i.path),
    ),
  );
  for (const source of [...found].sort()) {
    if (!loaded.has(`./${ISLANDS[source]}.mjs`)) continue;
    const island = await build({
      ...common(at),
      write: false,
      entryPoints: { [ISLANDS[source] as string]: resolve(ROOT, source) },
    });
    written.push(...island.outputFiles);
    Object.assign(metafile.outputs, island.metafile?.outputs);
    Object.assign(metafile.inputs, island.metafile?.inputs);
  }
  mkdirSync(outdir, { recursive: true });
  let mapBytes = 0;
  for (const file of written) {
    const path = relative(at, file.path);
    if (!path.endsWith('.map')) writeFileSync(join(outdir, path), file.contents);
    else {
      const text = projectSources(file.text, dirname(file.path));
      writeFileSync(join(outdir, path), text);
      const output = metafile.outputs[relative(ROOT, file.path).split('\\').join('/')];
      if (output) output.bytes = Buffer.byteLength(text);
      mapBytes += Buffer.byteLength(text);
    }
  }
  // Every island the code loads is beside it, or the function would fail on Lambda, not here.
  for (const path of loaded)
    if (path.startsWith('./island-') && !existsSync(join(outdir, path)))
      throw new Error(`${name} loads ${path}, which was not built (ISLANDS in lib/bundling.ts)`);
  const init = initFiles(metafile, at);
  const rel = outputPath(at);
  const files = Object.entries(metafile.outputs)
    .filter(([path]) => !path.endsWith('.map'))
    .map(([path, out]) => ({ path: rel(path), bytes: out.bytes, init: init.has(rel(path)) }));
  const sum = (list: typeof files) => list.reduce((total, file) => total + file.bytes, 0);
  return {
    name,
    outdir,
    files,
    mapBytes,
    initBytes: sum(files.filter((file) => file.init)),
    totalBytes: sum(files),
    metafile,
  };
}

/**
 * A source map (`text`, written for a file in `dir`) with its sources as paths in the project
 * (`functions/emails/deliver.ts`, `node_modules/@smithy/…`), so a frame names the file a reader
 * opens. A source of no file (a plugin's namespace: `left-out:route-schemas`) stays as it is.
 */
function projectSources(text: string, dir: string): string {
  const map = JSON.parse(text) as { sources: string[] };
  map.sources = map.sources.map((source) => {
    if (/^[\w-]+:/.test(source)) return source;
    const path = relative(ROOT, resolve(dir, source)).split('\\').join('/');
    // A package by its place under node_modules, wherever that folder really is (a link, a parent's).
    const at = path.indexOf('node_modules/');
    return at >= 0 ? path.slice(at) : path;
  });
  return JSON.stringify(map);
}

/**
 * Builds these functions, each into `<outdir>/<name>/`, a few at a time: esbuild holds every
 * build's modules in memory (all 55 at once peaked near 5 GB; four at a time, under 1 GB), and on
 * a few cores more at once is no faster.
 */
export async function buildFunctions(
  names: readonly string[],
  outdir: string,
  concurrency = 4,
): Promise<Record<string, BuiltFunction>> {
  const built: Record<string, BuiltFunction> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, names.length) }, async () => {
      while (next < names.length) {
        const name = names[next++] as string;
        built[name] = await buildFunction(name, join(outdir, name));
      }
    }),
  );
  return built;
}

/** Every function of the service: each handler module in functions/handlers/. */
export const allFunctionNames = (): string[] =>
  readdirSync(fileURLToPath(new URL('../functions/handlers/', import.meta.url)))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.slice(0, -3))
    .sort();
