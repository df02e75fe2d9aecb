// A built function, invoked once in this fresh Node process, as Lambda would: imports
// <dir>/index.mjs, calls its handler with the event in <event.json>, and prints one JSON line: the
// handler's result (or the error it threw, as Lambda's runtime logs it: type, message, stack), the
// files of <dir> Node loaded at init and while handling the event (recorded by
// test/support/record-loads.mjs as Node loads them), the files of <dir> the code read itself
// (readFileSync: a source map is read, not loaded), and how long each took.
import fs, { readFileSync } from 'node:fs';
import { register, syncBuiltinESMExports } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [dir, eventFile, functionName] = process.argv.slice(2);
// The local SQS emulator names queues http://sqs.<region>.localhost:<port>/…: its own helper makes
// *.localhost resolve to 127.0.0.1 here, as it does in the local service's process.
const { interceptLocalhostDns } = await import('fauxqs');
interceptLocalhostDns();
const log = join(dir, `.loads-${process.pid}`);
// (BUNDLE_RUNNER_RECORD=false: none recorded, and no hooks to slow the loading that is timed.)
const reads = [];
if (process.env.BUNDLE_RUNNER_RECORD !== 'false') {
  register('./record-loads.mjs', import.meta.url, { data: { log } });
  const read = fs.readFileSync;
  fs.readFileSync = function (path, ...rest) {
    if (typeof path === 'string') reads.push(path);
    return read.call(this, path, ...rest);
  };
  // The bundles' `import { readFileSync } from 'node:fs'` sees the recording one too.
  syncBuiltinESMExports();
}
const readOf = () =>
  reads
    .map((path) => relative(dir, path))
    .filter((path) => !path.startsWith('..') && !path.startsWith('.loads-'));
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
const started = performance.now();
const { handler } = await import(pathToFileURL(join(dir, 'index.mjs')).href);
const imported = performance.now();
const init = loaded();
const readAtInit = readOf();
const context = {
  awsRequestId: `fresh-${process.pid}`,
  functionName,
  getRemainingTimeInMillis: () => 10_000,
};
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const called = performance.now();
let result;
let error;
try {
  result = await handler(event, context);
} catch (thrown) {
  error = { errorType: thrown?.name, errorMessage: thrown?.message, stack: String(thrown?.stack ?? '') };
}
const done = performance.now();
console.log(
  JSON.stringify({
    result,
    error,
    init,
    all: loaded(),
    readAtInit,
    read: readOf(),
    importMs: imported - started,
    firstMs: done - called,
  }),
);
