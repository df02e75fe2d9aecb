import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

/**
 * The SDK clients describe every operation of their service in `dist-es/schemas/schemas_0.js`:
 * S3's holds 481 entries, of which a function presigning a GetObject uses a dozen. esbuild drops
 * the unused ones only if their declarations are free of side effects, and it cannot tell that of
 * an object literal with a computed key (`{ [_h]: ["PUT", "/?abac", 200] }`: `_h` could be an
 * object whose toString runs code), so S3's, SES's and SQS's are all kept. Here each computed key
 * that names one of the module's own string constants (`const _h = "http";`) is written as that
 * string: the same object, and esbuild sees it is pure. test/unit/bundling.test.ts holds every
 * schema of every client to what the SDK's own module exports.
 */
export const SDK_SCHEMAS = /[\\/]@aws-sdk[\\/]client-[\w-]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/;

/** The module with its computed keys on its own string constants written as literal keys. */
export function inlineConstantKeys(source: string): { contents: string; inlined: number } {
  const strings = new Map<string, string>();
  for (const [, name, value] of source.matchAll(/^const ([\w$]+) = ("(?:[^"\\\n]|\\.)*");$/gm))
    if (name && value) strings.set(name, value);
  let inlined = 0;
  const contents = source.replace(/\[([\w$]+)\]:/g, (whole, name: string) => {
    const value = strings.get(name);
    // A literal "__proto__" key sets the prototype where a computed one makes a property.
    if (value === undefined || value === '"__proto__"') return whole;
    inlined++;
    return `${value}:`;
  });
  return { contents, inlined };
}

export const pureSdkSchemas: Plugin = {
  name: 'pure-sdk-schemas',
  setup(build) {
    build.onLoad({ filter: SDK_SCHEMAS }, async ({ path }) => ({
      contents: inlineConstantKeys(await readFile(path, 'utf8')).contents,
      loader: 'js',
    }));
  },
};
