import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunction, ENTRY_FILE } from '../../lib/bundling.js';
import { EmailServiceStack } from '../../lib/email-service-stack.js';

/**
 * `cdk synth` as `cdk deploy` runs it, bundling on: every function built by lib/bundling.ts
 * (lib/function-code.ts), each into an asset of its own. CDK remembers bundling by source path and
 * options; were the function's name not in them, every function would deploy the first one's code.
 */
const outdir = mkdtempSync(join(tmpdir(), 'cdk-bundling-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Every file of a directory, relative, with a hash of its bytes. */
function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at)) {
      const path = join(at, entry);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return files;
}

describe('functions as synthesized for deployment', () => {
  let assets: Record<string, { hash: string; dir: string; handler: string }>;
  let stack: EmailServiceStack;
  beforeAll(() => {
    const app = new App({ outdir });
    stack = new EmailServiceStack(app, 'Bundled', { env: { account: '123456789012', region: 'us-east-1' } });
    const assembly = app.synth();
    type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
    // A function's template: its concept's nested stack's, a file of the assembly (as CloudFormation gets it).
    const templateOf = (of: Stack): { Resources: Resources } =>
      of.nestedStackParent
        ? JSON.parse(readFileSync(join(assembly.directory, of.templateFile), 'utf8'))
        : assembly.getStackByName(of.stackName).template;
    assets = {};
    for (const [name, fn] of Object.entries(stack.functions)) {
      const id = Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnElement);
      const props = templateOf(Stack.of(fn)).Resources[id]?.Properties as {
        Code: { S3Key: string };
        Handler: string;
      };
      const hash = props.Code.S3Key.replace(/\.zip$/, '');
      assets[name] = { hash, dir: join(outdir, `asset.${hash}`), handler: props.Handler };
    }
  }, 240_000);

  it('gives each function an asset of its own, its handler in index.mjs', () => {
    const names = Object.keys(assets);
    expect(names.length).toBeGreaterThan(50);
    const hashes = new Set(names.map((name) => assets[name]?.hash));
    expect(hashes.size).toBe(names.length);
    for (const name of names) {
      const asset = assets[name] as { dir: string; handler: string };
      expect(asset.handler, name).toBe('index.handler');
      expect(readdirSync(asset.dir), name).toContain(ENTRY_FILE);
    }
  });

  it('names no path of this machine in any asset, so the same sources hash the same anywhere', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    for (const [name, asset] of Object.entries(assets))
      for (const file of Object.keys(filesOf(asset.dir))) {
        const text = readFileSync(join(asset.dir, file), 'utf8');
        expect(text.includes(root), `${name}/${file} names ${root}`).toBe(false);
        // Nor where it was built (lib/function-code.ts builds in a temporary directory), nor cdk.out.
        expect(text.includes('.function-builds-'), `${name}/${file} names its build directory`).toBe(false);
        expect(text.includes(outdir), `${name}/${file} names ${outdir}`).toBe(false);
      }
  });

  it.each(['list-emails', 'send-email', 'get-console'])(
    '%s deploys the bytes buildFunction builds, chunks and all',
    async (name) => {
      const built = await buildFunction(name, join(outdir, `own-${name}`));
      const asset = assets[name] as { dir: string };
      expect(filesOf(asset.dir)).toEqual(filesOf(built.outdir));
    },
    60_000,
  );
});
