import { buildConsole } from '../../bin/build-console.js';

/**
 * vitest's global setup: the console built from its sources as they are now (a fresh clone, or
 * sources changed since the last build: a test must never see an older console). esbuild takes a
 * fraction of a second; the files are replaced atomically.
 */
export default async function setup() {
  await buildConsole();
}
