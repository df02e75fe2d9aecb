import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/catalog.js';
import { BEYOND_THE_TABLE, budgetOf, NOT_AT_INIT, TABLE_BUDGET } from '../../lib/budgets.js';
import { type BuiltFunction, buildFunction } from '../../lib/bundling.js';

/**
 * Every function built as `cdk synth` builds it, held to its budget of bytes loaded at init
 * (lib/budgets.ts). Times are measured by `npm run bench`, never here.
 */
const NAMES = readdirSync('functions/handlers').map((file) => file.replace(/\.ts$/, ''));
const dir = mkdtempSync(join(tmpdir(), 'budgets-'));
const built: Record<string, BuiltFunction> = {};
beforeAll(async () => {
  await Promise.all(
    NAMES.map(async (name) => {
      built[name] = await buildFunction(name, join(dir, name));
    }),
  );
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The packages (or project files) whose code is in a function's files loaded at init. */
function loadedAtInit(fn: BuiltFunction): Set<string> {
  const initOutputs = Object.entries(fn.metafile.outputs).filter(([path]) =>
    fn.files.some((file) => file.init && path.endsWith(file.path)),
  );
  const packages = new Set<string>();
  for (const [, output] of initOutputs)
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (!bytesInOutput) continue;
      const pkg = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
      packages.add(pkg ?? input);
    }
  return packages;
}

describe('what each function loads at init', () => {
  it('covers every function in the catalog', () => {
    expect(NAMES.sort()).toEqual(Object.keys(FUNCTIONS).sort());
    for (const name of Object.keys(BEYOND_THE_TABLE)) expect(NAMES).toContain(name);
  });

  it.each(NAMES)('%s stays within its budget', (name) => {
    const fn = built[name] as BuiltFunction;
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    expect(
      fn.initBytes,
      `${name} loads ${kb(fn.initBytes)} at init; its budget is ${kb(budgetOf(name))}`,
    ).toBeLessThanOrEqual(budgetOf(name));
  });

  it.each(NAMES.filter((name) => !(name in BEYOND_THE_TABLE)))(
    '%s, on the table budget, loads no other AWS client, date parser or MIME table at init',
    (name) => {
      const atInit = loadedAtInit(built[name] as BuiltFunction);
      expect(NOT_AT_INIT.filter((pkg) => atInit.has(pkg))).toEqual([]);
      expect(budgetOf(name)).toBe(TABLE_BUDGET);
    },
  );

  it.each(Object.entries(BEYOND_THE_TABLE).filter(([, clients]) => clients.length))(
    '%s loads at init the clients its every request calls (%s): deferring them would not count',
    (name, clients) => {
      const atInit = loadedAtInit(built[name] as BuiltFunction);
      for (const client of clients) expect(atInit, `${name} defers ${client}`).toContain(client);
    },
  );

  it.each(Object.keys(BEYOND_THE_TABLE))(
    '%s is given the larger budget because it calls beyond the table',
    (name) => {
      // A user's endpoint, checked or called on every request (no AWS grant says so).
      if (BEYOND_THE_TABLE[name]?.includes('ipaddr.js')) return;
      const spec = FUNCTIONS[name as keyof typeof FUNCTIONS] as Record<string, unknown>;
      const beyond = [
        'sendQueue',
        'webhookQueue',
        'content',
        'sendsEmail',
        'identities',
        'configurationSets',
        'sesSuppressions',
      ];
      expect(
        beyond.some((key) => spec[key] !== undefined),
        name,
      ).toBe(true);
    },
  );
});
