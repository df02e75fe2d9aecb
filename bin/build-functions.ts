#!/usr/bin/env node
/**
 * `tsx bin/build-functions.ts <outdir> [name…]`: builds functions (every handler in
 * functions/handlers/ when none is named) with lib/bundling.ts, each into `<outdir>/<name>/`.
 * `cdk synth` runs it once (lib/function-code.ts): CDK's bundling hooks are synchronous, and
 * esbuild's plugins and splitting need its asynchronous API.
 */
import { allFunctionNames, buildFunctions } from '../lib/bundling.js';

const [outdir, ...named] = process.argv.slice(2);
if (!outdir) throw new Error('usage: build-functions <outdir> [name…]');
const names = named.length ? named : allFunctionNames();
const started = performance.now();
const built = Object.values(await buildFunctions(names, outdir));
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
console.error(
  `Built ${built.length} functions in ${((performance.now() - started) / 1000).toFixed(1)} s ` +
    `(init ${kb(Math.min(...built.map((b) => b.initBytes)))} to ${kb(Math.max(...built.map((b) => b.initBytes)))})`,
);
