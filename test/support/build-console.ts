import { existsSync } from 'node:fs';
import { buildConsole } from '../../bin/build-console.js';

/**
 * vitest's global setup: the console's built files, when they are not there yet (a fresh clone
 * where `npx vitest run <file>` runs before any npm script built them).
 */
export default async function setup() {
  if (!existsSync('functions/console/assets.generated.ts')) await buildConsole();
}
