// Module hooks (node:module register) for test/support/bundle-runner.mjs: appends the URL of every
// module Node loads to a file, before handing it over, so the runner knows which files of a
// bundle were loaded and when.
import { appendFileSync } from 'node:fs';

let log;
export function initialize(data) {
  log = data.log;
}
export async function load(url, context, nextLoad) {
  appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
