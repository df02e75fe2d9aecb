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

/**
 * An SMTP email's reading (issue 42), loaded with import() by accept-send.ts `acceptMime`, which
 * only the SMTP relay calls: the send routes share accept-send.ts, never call it, and never load its
 * chunk (an import() is no load at init: test/e2e/bundle-budgets.test.ts).
 */
const SMTP_ONLY = 'functions/emails/accept-mime.ts';

function reached(
  entry: string,
  skip: ReadonlySet<string> = new Set(),
): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop() as string;
    if (files.has(file) || skip.has(file)) continue;
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
      const { files, packages } = reached(`functions/handlers/${name}.ts`, new Set([SMTP_ONLY]));
      for (const p of ['postal-mime', '@aws-sdk/client-ses'])
        if (packages.has(p)) reaching.push(`${name}: ${p}`);
      if (files.has('functions/receiving/parse.ts')) reaching.push(`${name}: functions/receiving/parse.ts`);
    }
    expect(API_FUNCTIONS.length).toBeGreaterThan(40);
    expect(reaching).toEqual([]);
  });

  it('the SMTP relay’s reading of a message is loaded by acceptMime alone, with import()', () => {
    const { files, packages } = reached(SMTP_ONLY);
    expect(packages.has('postal-mime')).toBe(true);
    expect(files.has('functions/receiving/parse.ts')).toBe(false);
    const acceptSend = readFileSync('functions/emails/accept-send.ts', 'utf8');
    expect(acceptSend).toContain("await import('./accept-mime.js')");
    expect(acceptSend).not.toMatch(/^import (?!type\b).*'\.\/accept-mime\.js'/m);
  });

  it('receive-email and sweep-received do reach the parser (the walk follows what they load)', () => {
    for (const name of ['receive-email', 'sweep-received']) {
      const { files, packages } = reached(`functions/handlers/${name}.ts`);
      expect(packages.has('postal-mime'), name).toBe(true);
      expect(files.has('functions/receiving/parse.ts'), name).toBe(true);
    }
  });
});
