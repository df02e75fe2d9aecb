import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces in the service's source terms (`functions/emails/deliver.ts:212:11`) instead of the
 * minified bundle's (`index.mjs:1:48213`), worked out only when an error is logged or leaves the
 * handler. Each deployed function carries a source map beside each of its files (lib/bundling.ts:
 * `<file>.mjs.map`, named by no comment in the code, so Node never reads one on its own), read the
 * first time a frame of that file is mapped and kept for the life of the environment, with Node's
 * own SourceMap (node:module, without --enable-source-maps, which would parse every map at init).
 * Only frames of this function's own files are mapped; anything else (the tests and the local
 * runtime run the sources, where there is no map) stays as it is.
 */
const HERE = dirname(fileURLToPath(import.meta.url));

/** A frame's place in one of this function's files: `file:///var/task/index.mjs:1:2345`. */
const FRAME = /(?:file:\/\/)?(\/[^\s()]+\.mjs):(\d+):(\d+)/g;

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
export function sourceMappedStack(stack: string): string {
  return stack.replace(FRAME, (frame, path: string, line: string, column: string) => {
    let file = path;
    try {
      file = decodeURIComponent(path);
    } catch {}
    if (dirname(file) !== HERE) return frame;
    const map = mapOf(file);
    if (!map) return frame;
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1) as {
      originalSource?: string;
      originalLine?: number;
      originalColumn?: number;
    };
    if (!entry.originalSource || entry.originalLine === undefined) return frame;
    return `${entry.originalSource}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
  });
}

/**
 * An error whose stack (and its causes') is in source terms, for the logger to format: a copy,
 * so the error itself is left as thrown.
 */
export function sourceMappedError(error: Error, depth = 0): Error {
  const copy = Object.create(Object.getPrototypeOf(error)) as Error;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(error));
  if (typeof error.stack === 'string')
    Object.defineProperty(copy, 'stack', {
      value: sourceMappedStack(error.stack),
      writable: true,
      configurable: true,
    });
  if (error.cause instanceof Error && depth < 8)
    Object.defineProperty(copy, 'cause', {
      value: sourceMappedError(error.cause, depth + 1),
      writable: true,
      configurable: true,
    });
  return copy;
}
