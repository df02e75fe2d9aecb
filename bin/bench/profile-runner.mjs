// A built function, started cold in this fresh Node process as bundle-runner.mjs starts it
// (test/support/bundle-runner.mjs), with V8's sampling profiler on: one profile of init (the
// import of <dir>/index.mjs) and one of the first call of its handler with the event in
// <event.json>, written to <profiles>/init.cpuprofile and <profiles>/first.cpuprofile. Prints one
// JSON line: the handler's result and how long each part took (with the profiler's overhead).
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, eventFile, functionName, profiles] = process.argv.slice(2);
// As in bundle-runner.mjs: the local SQS emulator's *.localhost queue URLs resolve to 127.0.0.1.
const { interceptLocalhostDns } = await import('fauxqs');
interceptLocalhostDns();
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const context = {
  awsRequestId: `profiled-${process.pid}`,
  functionName,
  getRemainingTimeInMillis: () => 10_000,
};
const session = new Session();
session.connect();
await session.post('Profiler.enable');
// 50 µs: a cold start of ~100 ms gives ~2,000 samples (the default, 1 ms, gives ~100).
await session.post('Profiler.setSamplingInterval', {
  interval: Number(process.env.PROFILE_INTERVAL_US ?? 50),
});
const profiled = async (file, work) => {
  await session.post('Profiler.start');
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(join(profiles, file), JSON.stringify(profile));
  return { value, ms };
};
const init = await profiled('init.cpuprofile', () => import(pathToFileURL(join(dir, 'index.mjs')).href));
const first = await profiled('first.cpuprofile', () => init.value.handler(event, context));
session.disconnect();
console.log(JSON.stringify({ result: first.value, importMs: init.ms, firstMs: first.ms }));
