#!/usr/bin/env node
/**
 * `npx tsx bin/function-sizes.ts [name…]`: each function built as deployed (lib/bundling.ts), what
 * Node loads at init (the entry and its static chunks) and in all (with the chunks loaded on first
 * use), largest first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allFunctionNames, buildFunctions } from '../lib/bundling.js';

const named = process.argv.slice(2);
const names = named.length ? named : allFunctionNames();
const out = mkdtempSync(join(tmpdir(), 'sizes-'));
const built = Object.values(await buildFunctions(names, out));
rmSync(out, { recursive: true, force: true });
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
console.log('| function | init | with chunks loaded on first use |');
console.log('|---|---|---|');
for (const fn of built.sort((a, b) => b.initBytes - a.initBytes))
  console.log(`| ${fn.name} | ${kb(fn.initBytes)} | ${kb(fn.totalBytes)} |`);
