import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The code's structure, as a reader finds it: a folder per concept (functions/<concept>/), each
 * using only the concepts below it, no two files that import each other, however indirectly, and
 * no hand-written source file too long to read at once. docs/architecture.md draws the concepts.
 */

const SOURCE = /\.(ts|tsx|mts|mjs)$/;
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'dist' ? [] : filesUnder(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });

/** Every file of ours a file imports (statically, with `import()`, or as a type). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s*'(\.[^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
  ].map((m) => m[1] as string);
  return specifiers.flatMap((specifier) => {
    const base = normalize(join(dirname(file), specifier));
    const found = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base].find(
      (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
    );
    return found ? [found] : [];
  });
}

/** The source of the service and its tools (the tests aside). */
const FILES = ['functions', 'lib', 'local', 'console/src', 'bin'].flatMap(filesUnder);

/** Generated, not written: held to nothing here. */
const GENERATED = new Set(['functions/console/assets.generated.ts']);

/**
 * What each concept may use besides itself: the ones below it. A concept is a folder of functions/
 * holding its model, ports, use cases and route declarations.
 */
const MAY_USE: Readonly<Record<string, readonly string[]>> = {
  shared: [],
  webhooks: ['shared'],
  templates: ['shared'],
  suppressions: ['shared'],
  'request-logs': ['shared'],
  domains: ['webhooks', 'shared'],
  'api-keys': ['domains', 'shared'],
  metrics: ['domains', 'shared'],
  receiving: ['metrics', 'domains', 'webhooks', 'shared'],
  // The send gate reads the audience (contacts/reads.ts) and asks for unsubscribe links (unsubscribe/links.ts).
  emails: [
    'contacts',
    'unsubscribe',
    'templates',
    'suppressions',
    'metrics',
    'api-keys',
    'domains',
    'webhooks',
    'shared',
  ],
  // A broadcast fans out into emails (the emails' repository and queue ports), read from the audience.
  broadcasts: [
    'emails',
    'contacts',
    'contact-properties',
    'segments',
    'topics',
    'unsubscribe',
    'templates',
    'suppressions',
    'metrics',
    'domains',
    'webhooks',
    'shared',
  ],
  'api-reference': ['shared'],
  console: ['shared'],
};

const folderOf = (file: string) => file.split('/')[1] ?? '';

describe('the structure of the code', () => {
  it('has no circle of imports: no file reaches itself through what it imports (type imports and import() included)', () => {
    const graph = new Map(FILES.map((file) => [file, importsOf(file)]));
    const circles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const path: string[] = [];
    const visit = (file: string) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'visiting');
      path.push(file);
      for (const next of graph.get(file) ?? []) visit(next);
      path.pop();
      state.set(file, 'done');
    };
    for (const file of FILES) visit(file);
    expect(FILES.length).toBeGreaterThan(300);
    expect(circles).toEqual([]);
  });

  it('has no hand-written source file over 500 lines outside test/ and bin/', () => {
    const long = FILES.filter((file) => !file.startsWith('bin/') && !GENERATED.has(file))
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 500)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it("keeps each concept's model, ports, use cases and routes in its folder, using only the concepts below it", () => {
    const folders = readdirSync('functions', { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    for (const concept of Object.keys(MAY_USE)) expect(folders).toContain(concept);
    const wrong: string[] = [];
    for (const file of FILES.filter((f) => f.startsWith('functions/') && folderOf(f) in MAY_USE)) {
      const concept = folderOf(file);
      for (const target of importsOf(file)) {
        const other = folderOf(target);
        if (other === concept || !target.startsWith('functions/')) continue;
        if (!(MAY_USE[concept] ?? []).includes(other)) wrong.push(`${file} uses ${target}`);
      }
    }
    expect(wrong).toEqual([]);
    // Each concept with routes declares them beside its model and ports.
    for (const concept of Object.keys(MAY_USE).filter((c) => c !== 'shared'))
      expect(existsSync(`functions/${concept}/routes.ts`), concept).toBe(true);
  });
});
