import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as realCredentials from '@aws-sdk/credential-provider-node';
import * as realEndpointCache from '@aws-sdk/endpoint-cache';
import * as realEventStreams from '@smithy/core/event-streams';
import { build, type Metafile } from 'esbuild';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as credentials from '../../lib/bundling/credentials-from-env.js';
import { EndpointCache } from '../../lib/bundling/endpoint-cache.js';
import * as eventStreams from '../../lib/bundling/no-event-streams.js';
import { inlineConstantKeys, pureSdkSchemas } from '../../lib/bundling/pure-schemas.js';
import { ALIASES, BUILD_THE_DOCUMENT, buildOptions } from '../../lib/bundling.js';

/**
 * The stand-ins lib/bundling.ts puts in place of SDK modules: each must export every name the
 * bundled SDK takes from the module it replaces (so an SDK update that imports something new
 * fails here, not on Lambda), and behave as that module does where the functions reach it.
 */
const HANDLERS = readdirSync('functions/handlers').map((file) => `functions/handlers/${file}`);

/** What the bundled code imports from `specifier`, read from each importing file's source. */
function namesImported(metafile: Metafile, specifier: string): { names: Set<string>; unread: string[] } {
  const names = new Set<string>();
  const unread: string[] = [];
  const quoted = specifier.replace(/[/.@-]/g, '\\$&');
  for (const [file, input] of Object.entries(metafile.inputs)) {
    if (!input.imports.some((i) => i.original === specifier)) continue;
    const source = readFileSync(file, 'utf8');
    const forms = [
      new RegExp(`import\\s*\\{([^{}]*)\\}\\s*from\\s*["']${quoted}["']`, 'g'),
      new RegExp(`\\{([^{}]*)\\}\\s*=\\s*await\\s+import\\(\\s*["']${quoted}["']\\s*\\)`, 'g'),
    ];
    let read = 0;
    for (const form of forms)
      for (const match of source.matchAll(form)) {
        read++;
        for (const part of (match[1] ?? '').split(',')) {
          const name = part.trim().split(/\s+as\s+|\s*:\s*/)[0];
          if (name) names.add(name);
        }
      }
    const mentions = source.match(new RegExp(`["']${quoted}["']`, 'g'))?.length ?? 0;
    // Any other form (a namespace import, a re-export, require()) cannot be checked name by name.
    if (mentions !== read)
      unread.push(`${file}: ${mentions - read} import(s) of ${specifier} in another form`);
  }
  return { names, unread };
}

describe('the bundles’ stand-ins for SDK modules', () => {
  let metafile: Metafile;
  beforeAll(async () => {
    // Every handler, built as the stack builds them (one esbuild run, nothing written; with the
    // options of a function that builds the document, which keep every route's schemas).
    ({ metafile } = await build({
      ...buildOptions('get-openapi', tmpdir()),
      entryPoints: HANDLERS,
      outdir: tmpdir(),
      write: false,
      metafile: true,
      logLevel: 'silent',
    }));
  }, 60_000);

  const standIns = [
    ['@aws-sdk/credential-provider-node', credentials],
    ['@smithy/core/event-streams', eventStreams],
    ['@aws-sdk/endpoint-cache', { EndpointCache }],
  ] as const;

  it('replaces exactly these modules, each from lib/bundling/', () => {
    expect(Object.keys(ALIASES).sort()).toEqual(standIns.map(([specifier]) => specifier).sort());
    for (const target of Object.values(ALIASES))
      expect(target).toMatch(/[\\/]lib[\\/]bundling[\\/][\w-]+\.ts$/);
  });

  it.each(standIns)(
    '%s: the bundled SDK still imports it, and only names the stand-in exports',
    (specifier, module) => {
      const { names, unread } = namesImported(metafile, specifier);
      // An alias nothing uses any more is dead weight in lib/bundling.ts: remove it.
      expect(names.size, `nothing imports ${specifier} any more`).toBeGreaterThan(0);
      expect(unread).toEqual([]);
      const missing = [...names].filter((name) => !(name in module));
      expect(missing, `${specifier}: the SDK imports names the stand-in lacks`).toEqual([]);
    },
  );

  it('stands in for every export of the credential and endpoint-cache packages, not only those used today', () => {
    // (The packages load as CommonJS here: their `default` is the module itself.)
    const exported = (module: object) =>
      Object.keys(module)
        .filter((name) => name !== 'default')
        .sort();
    expect(exported(credentials)).toEqual(exported(realCredentials));
    expect(exported(realEndpointCache)).toEqual(['EndpointCache']);
    // Event streams: the stand-in covers what is imported (above); the rest must refuse, not exist.
    expect(Object.keys(eventStreams).every((name) => name in realEventStreams)).toBe(true);
  });

  it('bundles one copy of each SDK package (the stand-ins’ own dependencies are the clients’)', () => {
    // A second copy (node_modules/x/node_modules/@smithy/core) means package.json pins a stand-in's
    // dependency at another version than the clients': bump them together.
    const nested = Object.keys(metafile.inputs).filter((file) =>
      /node_modules\/.*node_modules\/@(aws-sdk|smithy)\//.test(file),
    );
    expect(nested).toEqual([]);
  });

  it('leaves the credential chain’s other links, and mnemonist, out of every bundle', () => {
    const inputs = Object.keys(metafile.inputs).join('\n');
    for (const gone of [
      'credential-provider-node/',
      'credential-provider-ini/',
      'credential-provider-sso/',
      'nested-clients/',
      'mnemonist/',
      'submodules/event-streams/',
    ])
      expect(inputs).not.toContain(gone);
  });
});

describe('credentials-from-env (for @aws-sdk/credential-provider-node)', () => {
  const saved = { ...process.env };
  const names = [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_CREDENTIAL_EXPIRATION',
    'AWS_PROFILE',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  ];
  const env = (values: Record<string, string>) => {
    for (const name of names) delete process.env[name];
    Object.assign(process.env, values);
  };
  afterEach(() => {
    for (const name of names) delete process.env[name];
    Object.assign(process.env, saved);
  });
  const lambda = {
    AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_SESSION_TOKEN: 'token',
  };

  it("gives what the SDK's full chain gives from Lambda's variables", async () => {
    env(lambda);
    const ours = await credentials.defaultProvider({})();
    const theirs = await realCredentials.defaultProvider({})();
    expect(ours).toEqual(theirs);
    expect(ours).toMatchObject({
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'token',
    });
  });

  it('is what an SDK client signs with, through its credentialDefaultProvider', async () => {
    env(lambda);
    const client = new DynamoDBClient({
      region: 'us-east-1',
      credentialDefaultProvider: credentials.defaultProvider,
    });
    await expect(client.config.credentials()).resolves.toMatchObject({ accessKeyId: 'ASIAEXAMPLE' });
  });

  it('fails as a CredentialsProviderError, saying why, when there are none', async () => {
    env({});
    await expect(credentials.defaultProvider({})()).rejects.toMatchObject({
      name: 'CredentialsProviderError',
      message: expect.stringContaining('lib/bundling.ts'),
    });
  });

  describe('from a container credentials endpoint', () => {
    let server: Server;
    let requests = 0;
    let expiration = new Date(Date.now() + 3_600_000);
    beforeAll(async () => {
      server = createServer((req, res) => {
        requests++;
        expect(req.headers.authorization).toBe('container-token');
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            AccessKeyId: `AKIDCONTAINER${requests}`,
            SecretAccessKey: 'container-secret',
            Token: 'container-token',
            Expiration: expiration.toISOString(),
          }),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const container = () => ({
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${(server.address() as AddressInfo).port}/creds`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN: 'container-token',
    });

    it('reads them there when the variables are not set, once while they are valid', async () => {
      env(container());
      requests = 0;
      expiration = new Date(Date.now() + 3_600_000);
      const provider = credentials.defaultProvider({});
      const first = await provider();
      expect(first).toMatchObject({ accessKeyId: 'AKIDCONTAINER1', sessionToken: 'container-token' });
      expect(await provider()).toBe(first);
      expect(requests).toBe(1);
    });

    it('renews them when they expire within 5 minutes', async () => {
      env(container());
      requests = 0;
      expiration = new Date(Date.now() + 60_000);
      const provider = credentials.defaultProvider({});
      await provider();
      expiration = new Date(Date.now() + 3_600_000);
      expect(await provider()).toMatchObject({ accessKeyId: 'AKIDCONTAINER2' });
    });

    it("prefers Lambda's variables when both are there, as the full chain does", async () => {
      env({ ...container(), ...lambda });
      await expect(credentials.defaultProvider({})()).resolves.toMatchObject({ accessKeyId: 'ASIAEXAMPLE' });
    });
  });
});

describe('no-event-streams (for @smithy/core/event-streams)', () => {
  it('gives S3’s client a marshaller at construction, one that refuses to work', () => {
    const config = resolveConfig();
    expect(() => config.eventStreamMarshaller.serialize()).toThrow(/Event streams are left out/);
    expect(() => config.eventStreamMarshaller.deserialize()).toThrow(/Event streams are left out/);
  });

  it('refuses, loudly, to serialize an event stream', () => {
    expect(() => new eventStreams.EventStreamSerde({})).toThrow(/lib\/bundling\.ts/);
  });

  const resolveConfig = () =>
    eventStreams.resolveEventStreamSerdeConfig({
      eventStreamSerdeProvider: eventStreams.eventStreamSerdeProvider,
    });
});

describe('endpoint-cache (for @aws-sdk/endpoint-cache)', () => {
  // Both caches stamp expiry times with Date.now(): one frozen clock, so the two are compared at the
  // same instant (a millisecond passing between their calls is not a difference).
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-27T12:00:00Z') });
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  it('answers every sequence of calls as the real one does (mnemonist LRU, expiry)', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd');
    const op = fc.oneof(
      fc.record({
        op: fc.constant('set' as const),
        key,
        endpoints: fc.array(
          fc.record({ Address: fc.constantFrom('x', 'y'), CachePeriodInMinutes: fc.constantFrom(0, 1, 10) }),
          { maxLength: 1 },
        ),
      }),
      fc.record({
        op: fc.constantFrom('get' as const, 'has' as const, 'delete' as const, 'getEndpoint' as const),
        key,
      }),
      fc.record({ op: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(op, { maxLength: 40 }), (capacity, ops) => {
        const ours = new EndpointCache(capacity);
        const theirs = new realEndpointCache.EndpointCache(capacity);
        for (const step of ops) {
          const run = (cache: EndpointCache | realEndpointCache.EndpointCache) => {
            if (step.op === 'clear') return cache.clear();
            if (step.op === 'set') return cache.set(step.key, step.endpoints);
            return cache[step.op](step.key);
          };
          expect(run(ours)).toEqual(run(theirs));
        }
      }),
    );
  });
});

describe("pure-sdk-schemas (the SDK clients' schemas, made tree-shakeable)", () => {
  const CLIENTS = ['client-dynamodb', 'client-s3', 'client-sesv2', 'client-sqs'];
  const schemas = (client: string) => `node_modules/@aws-sdk/${client}/dist-es/schemas/schemas_0.js`;
  const dir = mkdtempSync(join(tmpdir(), 'pure-schemas-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Every export of a bundle of `entry`, with or without the plugin, unminified. */
  async function bundle(entry: string, name: string, plugins: boolean) {
    const file = join(dir, `${name}.mjs`);
    writeFileSync(join(dir, `${name}-entry.mjs`), entry);
    await build({
      entryPoints: [join(dir, `${name}-entry.mjs`)],
      absWorkingDir: process.cwd(),
      nodePaths: [join(process.cwd(), 'node_modules')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: file,
      plugins: plugins ? [pureSdkSchemas] : [],
      logLevel: 'error',
    });
    return { file, source: readFileSync(file, 'utf8') };
  }

  /** A schema as data: arrays, objects and strings as they are; a thunk by its source text. */
  const shape = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === 'function' ? `fn:${String(v)}` : v)));

  it.each(CLIENTS)('%s: every schema is what the SDK’s module exports, key for key', async (client) => {
    expect(inlineConstantKeys(readFileSync(schemas(client), 'utf8')).inlined, client).toBeGreaterThan(0);
    const entry = `export * from ${JSON.stringify(join(process.cwd(), schemas(client)))};`;
    const [theirs, ours] = await Promise.all([
      bundle(entry, `${client}-sdk`, false),
      bundle(entry, `${client}-pure`, true),
    ]);
    const [a, b] = await Promise.all([
      import(pathToFileURL(theirs.file).href),
      import(pathToFileURL(ours.file).href),
    ]);
    expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
    for (const name of Object.keys(a)) {
      if (name === 'errorTypeRegistries') continue;
      expect(shape(b[name]), `${client} ${name}`).toEqual(shape(a[name]));
    }
  });

  it('lets esbuild drop the operations a function does not use', async () => {
    const entry = `import { GetObject$ } from ${JSON.stringify(join(process.cwd(), schemas('client-s3')))}; console.log(GetObject$);`;
    const [theirs, ours] = await Promise.all([
      bundle(entry, 's3-one-sdk', false),
      bundle(entry, 's3-one-pure', true),
    ]);
    expect(theirs.source).toContain('PutBucketAbac$');
    expect(ours.source).not.toContain('PutBucketAbac$');
    expect(ours.source).toContain('GetObject$');
    expect(ours.source.length).toBeLessThan(theirs.source.length / 2);
  });

  it('is in the build every function gets', () => {
    expect(buildOptions('list-emails', tmpdir()).plugins).toContain(pureSdkSchemas);
  });
});

describe("route-schemas-left-out (a route's schemas, in the document's functions only)", () => {
  const inputsOf = async (name: string, entry?: string) => {
    const { metafile } = await build({
      ...buildOptions(name, tmpdir()),
      ...(entry ? { entryPoints: { index: entry } } : {}),
      write: false,
      logLevel: 'silent',
    });
    // The files whose code is in the build (a file reached but tree-shaken away adds no bytes).
    const bytes = new Map<string, number>();
    for (const output of Object.values(metafile?.outputs ?? {}))
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs))
        bytes.set(input, (bytes.get(input) ?? 0) + bytesInOutput);
    return [...bytes].filter(([, n]) => n > 0).map(([input]) => input);
  };

  it("leaves every route's schemas out of a function that does not build the document", async () => {
    const inputs = await inputsOf('list-emails');
    expect(inputs).toContain('functions/emails/routes.ts');
    for (const file of [
      'functions/emails/answers.ts',
      'functions/emails/send-bodies.ts',
      'functions/shared/answers.ts',
    ])
      expect(inputs).not.toContain(file);
    expect(inputs.some((file) => file.includes('zod/v4/core/to-json-schema'))).toBe(false);
  });

  it('keeps them all in the functions that build it', async () => {
    expect([...BUILD_THE_DOCUMENT].sort()).toEqual(['get-api-reference', 'get-openapi']);
    const inputs = await inputsOf('get-openapi');
    for (const concept of ['emails', 'domains', 'templates', 'api-keys', 'suppressions', 'webhooks'])
      expect(inputs).toContain(`functions/${concept}/answers.ts`);
  });

  it('fails the build of any other function that reaches the document', async () => {
    await expect(inputsOf('list-emails', 'functions/handlers/get-openapi.ts')).rejects.toThrow(
      /list-emails builds the OpenAPI document: add it to BUILD_THE_DOCUMENT/,
    );
  });
});
