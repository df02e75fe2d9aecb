/**
 * Runs one benchmark section in a process of its own (`tsx bin/bench/child.ts <section>`), and
 * prints its result as the last line, in JSON: each section loads the handler modules, which build
 * their AWS clients once per process, so two sections cannot share one.
 */
import { handlerLatency } from './handlers.js';
import { requestLogBench } from './request-logs.js';
import { throughput } from './throughput.js';

process.env.LOG_LEVEL ??= 'silent';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const [section, ...args] = process.argv.slice(2);
const number = (i: number, fallback: number) => Number(args[i] ?? fallback);
const result =
  section === 'handlers'
    ? await handlerLatency(number(0, 5000), number(1, 500))
    : section === 'throughput'
      ? await throughput(number(0, 2000), number(1, 8), number(2, 300))
      : section === 'request-logs'
        ? await requestLogBench(number(0, 5000), number(1, 500))
        : undefined;
if (result === undefined) throw new Error(`no section ${section}`);
console.log(JSON.stringify(result));
process.exit(0);
