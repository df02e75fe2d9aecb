/**
 * How every function is bundled: esbuild, minified ESM for Node 22, AWS SDK v3 bundled (not taken
 * from the runtime) so it is tree-shaken to the commands each function uses. The stack and the
 * bundle-size benchmark both read this, so the benchmark measures what is deployed.
 */
export const NODE_TARGET = 'node22';

export const BUNDLE_OPTIONS = {
  minify: true,
  sourceMap: false,
  target: NODE_TARGET,
  mainFields: ['module', 'main'],
  // ESM output: some dependencies still call require(); give them one.
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  externalModules: [] as string[],
} as const;
