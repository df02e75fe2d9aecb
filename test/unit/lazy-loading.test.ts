/**
 * What a function loads on first use is out of its init: each function is built as deployed
 * (lib/bundling.ts, buildFunction) and the inputs of the files Node loads at init are compared with
 * those of the chunks it loads later. A static import of any of these modules (from the function or
 * anything its init reaches) puts it back in the init, and this fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BuiltFunction, buildFunction } from '../../lib/bundling.js';

const out = mkdtempSync(join(tmpdir(), 'lazy-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const built = new Map<string, Promise<BuiltFunction>>();
const build = (name: string) => {
  const known = built.get(name);
  if (known) return known;
  const fn = buildFunction(name, join(out, name));
  built.set(name, fn);
  return fn;
};

/** The source files (and packages) in a function's init files, and in its other chunks. */
async function inputsOf(name: string): Promise<{ init: string[]; lazy: string[] }> {
  const fn = await build(name);
  const init = new Set(fn.files.filter((file) => file.init).map((file) => file.path));
  const result = { init: [] as string[], lazy: [] as string[] };
  for (const [path, output] of Object.entries(fn.metafile.outputs)) {
    const inInit = [...init].some((file) => path.endsWith(`/${name}/${file}`));
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs))
      if (bytesInOutput > 0) (inInit ? result.init : result.lazy).push(input);
  }
  return result;
}

const has = (inputs: string[], module: string) => inputs.some((input) => input.includes(module));

const CHRONO = 'node_modules/chrono-node/';
const S3 = 'node_modules/@aws-sdk/client-s3/';
const IPADDR = 'node_modules/ipaddr.js/';
const TEMPLATES = 'functions/emails/send-templates.ts';
const CONTENT_STORE = 'functions/adapters/s3/content-store.ts';
const GUARDED_HTTP = 'functions/adapters/http/guarded-http.ts';
const MIME = 'node_modules/mime/';
const SQS = 'node_modules/@aws-sdk/client-sqs/';

describe('loaded on first use, not at init', { timeout: 120_000 }, () => {
  it('send-email: S3 and the content store, the MIME table, chrono-node, the template use cases', async () => {
    const { init, lazy } = await inputsOf('send-email');
    for (const module of [S3, CONTENT_STORE, MIME, CHRONO, TEMPLATES]) {
      expect(has(init, module), `${module} at init`).toBe(false);
      expect(has(lazy, module), `${module} in a chunk`).toBe(true);
    }
  });

  it('send-batch: chrono-node, the template use cases; no S3 at all', async () => {
    const { init, lazy } = await inputsOf('send-batch');
    expect(has(init, MIME), 'the MIME table at init').toBe(false);
    for (const module of [CHRONO, TEMPLATES]) {
      expect(has(init, module), `${module} at init`).toBe(false);
      expect(has(lazy, module), `${module} in a chunk`).toBe(true);
    }
    expect(has([...init, ...lazy], S3)).toBe(false);
  });

  it('get-email: S3 and the content store', async () => {
    const { init, lazy } = await inputsOf('get-email');
    for (const module of [S3, CONTENT_STORE]) {
      expect(has(init, module), `${module} at init`).toBe(false);
      expect(has(lazy, module), `${module} in a chunk`).toBe(true);
    }
  });

  it('update-email: chrono-node, and the send queue (an island of its own)', async () => {
    const { init, lazy } = await inputsOf('update-email');
    expect(has(init, CHRONO)).toBe(false);
    expect(has(lazy, CHRONO)).toBe(true);
    expect(has(init, SQS), 'SQS at init').toBe(false);
    expect(has(lazy, SQS), 'SQS in the island').toBe(true);
    expect((await build('update-email')).files.map((file) => file.path)).toContain('island-email-queue.mjs');
  });

  it('create-topic and update-contact-topics: the webhook delivery queue (an island of its own)', async () => {
    for (const name of ['create-topic', 'update-contact-topics']) {
      const { init, lazy } = await inputsOf(name);
      expect(has(init, SQS), `${name}: SQS at init`).toBe(false);
      expect(has(lazy, SQS), `${name}: SQS in the island`).toBe(true);
      expect((await build(name)).files.map((file) => file.path)).toContain('island-delivery-queue.mjs');
    }
  });

  it('update-webhook: the endpoint guard (ipaddr.js)', async () => {
    const { init, lazy } = await inputsOf('update-webhook');
    for (const module of [GUARDED_HTTP, IPADDR]) {
      expect(has(init, module), `${module} at init`).toBe(false);
      expect(has(lazy, module), `${module} in a chunk`).toBe(true);
    }
  });

  it('process-send-queue: S3 and the content store, the guarded fetch of attachments', async () => {
    const { init, lazy } = await inputsOf('process-send-queue');
    for (const module of [S3, CONTENT_STORE, GUARDED_HTTP, IPADDR]) {
      expect(has(init, module), `${module} at init`).toBe(false);
      expect(has(lazy, module), `${module} in a chunk`).toBe(true);
    }
    expect(has(init, MIME), 'the MIME table at init').toBe(false);
  });

  it('list-emails: none of these, at init or later', async () => {
    const { init, lazy } = await inputsOf('list-emails');
    for (const module of [S3, CHRONO, TEMPLATES, CONTENT_STORE, GUARDED_HTTP])
      expect(has([...init, ...lazy], module), module).toBe(false);
  });

  it('the attachment routes keep the content store at init (every request uses it)', async () => {
    const { init } = await inputsOf('get-attachment');
    expect(has(init, CONTENT_STORE)).toBe(true);
  });
});
