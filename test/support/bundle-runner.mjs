// A built function, invoked once in this fresh Node process, as Lambda would: imports
// <dir>/index.mjs, calls its handler with the event in <event.json>, and prints one JSON line: the
// handler's result, and the files of <dir> Node loaded at init and while handling the event
// (recorded by test/support/record-loads.mjs as Node loads them).
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [dir, eventFile, functionName] = process.argv.slice(2);
const log = join(dir, `.loads-${process.pid}`);
register('./record-loads.mjs', import.meta.url, { data: { log } });
const loaded = () => {
  let lines = [];
  try {
    lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {}
  return lines
    .filter((url) => url.startsWith('file:'))
    .map((url) => relative(dir, fileURLToPath(url)))
    .filter((path) => !path.startsWith('..'));
};
const { handler } = await import(pathToFileURL(join(dir, 'index.mjs')).href);
const init = loaded();
const context = {
  awsRequestId: `fresh-${process.pid}`,
  functionName,
  getRemainingTimeInMillis: () => 10_000,
};
const result = await handler(JSON.parse(readFileSync(eventFile, 'utf8')), context);
console.log(JSON.stringify({ result, init, all: loaded() }));
