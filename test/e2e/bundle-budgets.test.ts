import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/catalog.js';
import { FRONT_DOOR_AUTHORIZER } from '../../functions/http/front-door.js';
import {
  AUDIENCE_WRITE_BUDGET,
  BEYOND_TABLE_CLIENTS,
  budgetOf,
  LOADED_AT_INIT,
  NOT_AT_INIT,
  ON_AUDIENCE_WRITE_BUDGET,
  ON_BEYOND_TABLE_BUDGET,
  ON_RECEIVING_BUDGET,
  ON_WHOLE_API_BUDGET,
  TABLE_BUDGET,
  WHOLE_API_BUDGET,
} from '../../lib/budgets.js';
import { allFunctionNames, type BuiltFunction, buildFunctions } from '../../lib/bundling.js';

/**
 * Every function built as `cdk synth` builds it, held to its budget of bytes loaded at init
 * (lib/budgets.ts). Times are measured by `npm run bench`, never here.
 */
const NAMES = allFunctionNames();
const dir = mkdtempSync(join(tmpdir(), 'budgets-'));
let built: Record<string, BuiltFunction> = {};
beforeAll(async () => {
  built = await buildFunctions(NAMES, dir);
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
    // And the front door's authorizer, which the stack makes only with the front door on.
    expect(NAMES.sort()).toEqual([...Object.keys(FUNCTIONS), FRONT_DOOR_AUTHORIZER].sort());
    for (const name of [...ON_BEYOND_TABLE_BUDGET, ...Object.keys(LOADED_AT_INIT)])
      expect(NAMES).toContain(name);
  });

  it.each(NAMES)('%s stays within its budget', (name) => {
    const fn = built[name] as BuiltFunction;
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    expect(
      fn.initBytes,
      `${name} loads ${kb(fn.initBytes)} at init; its budget is ${kb(budgetOf(name))}`,
    ).toBeLessThanOrEqual(budgetOf(name));
  });

  it.each(NAMES.filter((name) => !ON_BEYOND_TABLE_BUDGET.has(name) && !ON_RECEIVING_BUDGET.has(name)))(
    '%s, on the table budget, loads no other AWS client, date parser, MIME table, metrics or address checker at init unless its every request uses it',
    (name) => {
      const atInit = loadedAtInit(built[name] as BuiltFunction);
      const needed = LOADED_AT_INIT[name] ?? [];
      expect(NOT_AT_INIT.filter((pkg) => atInit.has(pkg) && !needed.includes(pkg))).toEqual([]);
      // The audience's heaviest writes and the two holding tables of the whole API have budgets of
      // their own (lib/budgets.ts), the same rule.
      expect(budgetOf(name)).toBe(
        ON_AUDIENCE_WRITE_BUDGET.has(name)
          ? AUDIENCE_WRITE_BUDGET
          : ON_WHOLE_API_BUDGET.has(name)
            ? WHOLE_API_BUDGET
            : TABLE_BUDGET,
      );
    },
  );

  it.each(Object.entries(LOADED_AT_INIT))(
    '%s loads at init what its every request uses (%s): deferring it would not count',
    (name, packages) => {
      const atInit = loadedAtInit(built[name] as BuiltFunction);
      for (const pkg of packages) expect(atInit, `${name} defers ${pkg}`).toContain(pkg);
    },
  );

  it.each([...ON_BEYOND_TABLE_BUDGET, ...ON_RECEIVING_BUDGET])(
    '%s is on a larger budget because it loads an AWS client beyond DynamoDB at init',
    (name) => {
      const atInit = loadedAtInit(built[name] as BuiltFunction);
      expect(BEYOND_TABLE_CLIENTS.filter((client) => atInit.has(client)).length, name).toBeGreaterThan(0);
      expect(
        LOADED_AT_INIT[name]?.some((pkg) => BEYOND_TABLE_CLIENTS.includes(pkg)),
        name,
      ).toBe(true);
    },
  );
});
