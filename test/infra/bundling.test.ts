import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { esbuildOptions } from '../../lib/bundling.js';
import { ServiceFunction } from '../../lib/constructs/service-function.js';

/**
 * The benchmark and the bundle tests build with esbuild's API (lib/bundling.ts `esbuildOptions`);
 * the stack through NodejsFunction's esbuild command line. This synthesizes one function with
 * bundling on, as `cdk deploy` does, and holds the asset to the API's build byte for byte: the
 * aliases reach CDK's esbuild, from the directory CDK runs it in.
 */
const outdir = mkdtempSync(join(tmpdir(), 'cdk-bundling-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('bundling', () => {
  it('the stack deploys the bytes esbuildOptions builds', async () => {
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundling', { env: { account: '123456789012', region: 'us-east-1' } });
    const fn = new ServiceFunction(stack, 'Function', { name: 'list-emails' });
    for (const key of fn.spec.env) fn.setEnvironment(key, 'x');
    app.synth();
    const [asset] = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
    const deployed = readFileSync(join(outdir, asset as string, 'index.mjs'));

    const outfile = join(outdir, 'api.mjs');
    await build({ ...esbuildOptions('functions/handlers/list-emails.ts', outfile), logLevel: 'error' });
    expect(deployed.equals(readFileSync(outfile))).toBe(true);
    expect(deployed.toString()).toContain('these bundles read them from AWS_ACCESS_KEY_ID');
  }, 60_000);
});
