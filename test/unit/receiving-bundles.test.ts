import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_FUNCTIONS } from '../../functions/catalog.js';

/**
 * The parser (postal-mime) and SES's v1 client (receipt rules) are loaded by receiving's workers
 * only: no API function reaches them through its static imports, so neither weighs on an API
 * function's bundle or init. (Type imports are left out: esbuild drops them.)
 */

/** What a file imports at run time (statically or with import()): our files, and packages by name. */
function runtimeImportsOf(file: string): { files: string[]; packages: string[] } {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s*'([^']+)'/gm),
    ...text.matchAll(/^\s*import\s*'([^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1] as string);
  const files: string[] = [];
  const packages: string[] = [];
  for (const specifier of specifiers) {
    if (!specifier.startsWith('.')) {
      packages.push(specifier);
      continue;
    }
    const base = normalize(join(dirname(file), specifier));
    const found = [base.replace(/\.js$/, '.ts'), base].find(
      (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
    );
    if (found) files.push(found);
  }
  return { files, packages };
}

function reached(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    const imports = runtimeImportsOf(file);
    for (const p of imports.packages) packages.add(p);
    queue.push(...imports.files);
  }
  return { files, packages };
}

describe("receiving's heavy modules stay out of the API functions", () => {
  it('no API function reaches postal-mime, the parser or @aws-sdk/client-ses', () => {
    const reaching: string[] = [];
    for (const name of API_FUNCTIONS) {
      const { files, packages } = reached(`functions/handlers/${name}.ts`);
      for (const p of ['postal-mime', '@aws-sdk/client-ses'])
        if (packages.has(p)) reaching.push(`${name}: ${p}`);
      if (files.has('functions/receiving/parse.ts')) reaching.push(`${name}: functions/receiving/parse.ts`);
    }
    expect(API_FUNCTIONS.length).toBeGreaterThan(40);
    expect(reaching).toEqual([]);
  });

  it('receive-email and sweep-received do reach the parser (the walk follows what they load)', () => {
    for (const name of ['receive-email', 'sweep-received']) {
      const { files, packages } = reached(`functions/handlers/${name}.ts`);
      expect(packages.has('postal-mime'), name).toBe(true);
      expect(files.has('functions/receiving/parse.ts'), name).toBe(true);
    }
  });
});
