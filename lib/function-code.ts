import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { ENTRY_FILE } from './bundling.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const HANDLERS_DIR = join(ROOT, 'functions', 'handlers');

/**
 * Where this synth's builds are, by cloud assembly: every function built once, on the first asset
 * CDK bundles, into a directory of the assembly (removed when the process exits; a test's assembly
 * goes with its test), so nothing is left behind in the system's temporary directory.
 */
const built = new Map<string, string>();

function buildAll(assembly: string): string {
  const done = built.get(assembly);
  if (done) return done;
  const dir = mkdtempSync(join(assembly, '.function-builds-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  // CDK's bundling hook is synchronous; esbuild's API (plugins, splitting) is not: one child
  // process builds every function (bin/build-functions.ts), from the project's root.
  execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'build-functions.ts'), dir], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  built.set(assembly, dir);
  return dir;
}

/**
 * A function's code: its build by lib/bundling.ts (`index.mjs`, and the chunks it loads on first
 * use), made during `cdk synth` and hashed by its bytes, so an asset changes only when its
 * function's code does, on any machine. CDK remembers bundling by source path and options: the
 * function's name is in the options, so each function gets its own asset and not the first one's.
 * Synths that skip bundling (`aws:cdk:bundling-stacks`) build nothing.
 */
export function functionCode(name: string): Code {
  if (!existsSync(join(HANDLERS_DIR, `${name}.ts`)))
    throw new Error(`No handler functions/handlers/${name}.ts`);
  return Code.fromAsset(HANDLERS_DIR, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local build below either succeeds or throws.
      image: DockerImage.fromRegistry('local-esbuild-build-only'),
      command: ['build-function', name],
      local: {
        tryBundle(outputDir: string) {
          // CDK bundles into a directory of the cloud assembly.
          const from = join(buildAll(dirname(outputDir)), name);
          if (!existsSync(join(from, ENTRY_FILE))) throw new Error(`${name} was not built`);
          cpSync(from, outputDir, { recursive: true });
          return true;
        },
      },
    },
  });
}
