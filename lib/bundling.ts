import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

/**
 * How every function is bundled: esbuild, minified ESM for Node 22, AWS SDK v3 bundled (not taken
 * from the runtime) so it is tree-shaken to the commands each function uses. The stack
 * (lib/constructs/service-function.ts, through NodejsFunction's esbuild command line) and the
 * bundle-size benchmark (bin/bench.ts, through esbuild's API: `esbuildOptions` below) both read
 * this, so the benchmark measures what is deployed.
 */
export const NODE_TARGET = 'node22';

const shim = (file: string) => fileURLToPath(new URL(`./bundling/${file}`, import.meta.url));

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
 *
 * Absolute paths: esbuild resolves an alias's target from its working directory, which is the
 * project root when CDK bundles locally (esbuild is a devDependency, so it always does; Docker
 * bundling would not see these paths and fails loudly).
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

// ESM output: some dependencies still call require(); give them one.
const BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

/** NodejsFunction's `bundling` (its format, ESM, is set where the function is built). */
export const BUNDLE_OPTIONS = {
  minify: true,
  sourceMap: false,
  target: NODE_TARGET,
  mainFields: ['module', 'main'] as string[],
  banner: BANNER,
  externalModules: [] as string[],
  /** What NodejsFunction has no option for, as esbuild command-line flags. */
  esbuildArgs: {
    '--alias': Object.entries(ALIASES).map(([from, to]) => `${from}=${to}`),
    '--log-override': Object.entries(LOG_OVERRIDES).map(([id, level]) => `${id}=${level}`),
  } as Record<string, string[]>,
};

/**
 * The same build through esbuild's API, for one handler: what NodejsFunction runs for it
 * (`esbuild --bundle <entry> --target=node22 --platform=node --format=esm --minify
 * --banner:js=… --main-fields=module,main --alias:… --log-override:…`), to an outfile of the caller's.
 */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE_OPTIONS.target,
    minify: BUNDLE_OPTIONS.minify,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    banner: { js: BUNDLE_OPTIONS.banner },
    alias: { ...ALIASES },
    logOverride: { ...LOG_OVERRIDES },
    outfile,
  };
}
