#!/usr/bin/env node
/**
 * `npx tsx bin/function-sizes.ts [name…]`: each function built as deployed (lib/bundling.ts), what
 * Node loads at init (the entry and its static chunks) and in all (with the chunks loaded on first
 * use), largest first.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFunction } from '../lib/bundling.js';

const named = process.argv.slice(2);
const names = named.length
  ? named
  : readdirSync('functions/handlers')
      .filter((file) => file.endsWith('.ts'))
      .map((file) => file.slice(0, -3));
const out = mkdtempSync(join(tmpdir(), 'sizes-'));
const built = await Promise.all(names.map((name) => buildFunction(name, join(out, name))));
rmSync(out, { recursive: true, force: true });
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
console.log('| function | init | with chunks loaded on first use |');
console.log('|---|---|---|');
for (const fn of built.sort((a, b) => b.initBytes - a.initBytes))
  console.log(`| ${fn.name} | ${kb(fn.initBytes)} | ${kb(fn.totalBytes)} |`);
