import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );

const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? '');

describe('architecture', () => {
  it('keeps the core free of AWS SDKs, middy and the adapters', () => {
    const offending = filesUnder('functions/core').flatMap((file) =>
      importsOf(file)
        .filter((spec) => /^@aws-sdk\/|^@middy\/|^aws-lambda$|\/adapters\/|\/handlers\/|\/http\//.test(spec))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('keeps business logic out of the CDK code: lib/ reads only the route table and table layout', () => {
    const fromFunctions = filesUnder('lib').flatMap((file) =>
      importsOf(file).filter((spec) => spec.includes('functions/')),
    );
    expect([...new Set(fromFunctions)].sort()).toEqual([
      '../functions/adapters/dynamodb/table.js',
      '../functions/routes.js',
    ]);
  });
});
