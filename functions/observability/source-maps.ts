import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';

/**
 * Stack traces in the service's source terms (`functions/emails/deliver.ts:212:11`) instead of the
 * minified bundle's (`index.mjs:1:48213`), worked out only when an error is logged or leaves the
 * handler. Each deployed function carries a source map beside each of its files (lib/bundling.ts:
 * `<file>.mjs.map`, named by no comment in the code, so Node never reads one on its own), read the
 * first time a frame of that file is mapped and kept for the life of the environment, with Node's
 * own SourceMap (node:module, without --enable-source-maps, which would parse every map at init).
 * Only frames of this function's own files are mapped; anything else (the tests and the local
 * runtime run the sources, where there is no map) stays as it is. Kept small: it is in every
 * function's init (lib/budgets.ts).
 */
const HERE = import.meta.dirname;

/** A frame's place in a bundle's file: `file:///var/task/index.mjs:1:2345`. */
const FRAME = /(?:file:\/\/)?(\/[^\s()]+)\/([^/\s()]+\.mjs):(\d+):(\d+)/g;

const maps = new Map<string, SourceMap | null>();

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      map = null;
    }
    maps.set(file, map);
  }
  return map;
}

/** A stack with each frame of this function's files at its place in the sources. */
export const sourceMappedStack = (stack: string): string =>
  stack.replace(FRAME, (frame, dir: string, name: string, line: string, column: string) => {
    const map = dir === HERE ? mapOf(`${dir}/${name}`) : null;
    const at = map?.findEntry(+line - 1, +column - 1) as
      | { originalSource?: string; originalLine: number; originalColumn: number }
      | undefined;
    return at?.originalSource
      ? `${at.originalSource}:${at.originalLine + 1}:${at.originalColumn + 1}`
      : frame;
  });

/**
 * The error, its stack (and its causes') in source terms: changed in place, as the error is being
 * logged or leaving the handler. Mapping a mapped stack changes nothing.
 */
export function sourceMapped<T>(error: T, depth = 0): T {
  if (error instanceof Error && depth < 8) {
    try {
      if (typeof error.stack === 'string') error.stack = sourceMappedStack(error.stack);
    } catch {}
    sourceMapped(error.cause, depth + 1);
  }
  return error;
}
