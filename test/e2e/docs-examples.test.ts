import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { type DocBlock, docPages, isUnmarkedShell, markOf, readBlocks } from '../support/docs-blocks.js';
import { httpsClient } from '../support/https.js';

// Every shell block of README.md and docs/*.md says where it runs (the convention:
// docs/development.md, "Examples that run"). `sh local` blocks run here, each page's in order in
// one bash, against one local service started as the README starts it; `sh aws` and `sh dev`
// blocks are checked for syntax.

const blocks = readBlocks();
const local = blocks.filter((b) => markOf(b) === 'local');
const pagesWithLocal = docPages().filter((page) => local.some((b) => b.page === page));
const where = (b: DocBlock) => `${b.page}:${b.line}`;

// The README's key: its start is `DEV_API_KEY=… npm start`, and each page's setup block names it.
const readmeKey = /DEV_API_KEY=(esk_\S+) npm start/.exec(readFileSync('README.md', 'utf8'))?.[1] ?? '';
const SETUP = [
  'export API=https://localhost:3000/v1',
  `export API_KEY=${readmeKey}`,
  'export CURL_CA_BUNDLE=$PWD/.local-data/tls/localhost-cert.pem',
];
/** A line's command, without a trailing `# output` comment. */
const command = (line: string) => (line.trim().startsWith('#') ? '' : line.replace(/\s#\s.*$/, ''));

describe('the docs’ shell blocks', () => {
  it('each says where it runs: sh local, sh aws or sh dev', () => {
    expect(blocks.filter(isUnmarkedShell).map((b) => `${where(b)} \`\`\`${b.info}`)).toEqual([]);
    expect(local.length).toBeGreaterThan(0);
  });

  it('sh aws and sh dev blocks are valid bash (bash -n)', () => {
    const broken = blocks
      .filter((b) => markOf(b) === 'aws' || markOf(b) === 'dev')
      .flatMap((b) => {
        try {
          execFileSync('bash', ['-n', '-c', b.body], { stdio: 'pipe' });
          return [];
        } catch (error) {
          return [`${where(b)}: ${(error as { stderr?: Buffer }).stderr?.toString().trim()}`];
        }
      });
    expect(broken).toEqual([]);
  });

  it('each page with local blocks begins them with the setup block, and none has a placeholder', () => {
    expect(readmeKey).toMatch(/^esk_/);
    for (const page of pagesWithLocal) {
      const first = local.find((b) => b.page === page) as DocBlock;
      const lines = first.body.split('\n').map((l) => command(l).trim());
      expect({ page, setup: SETUP.filter((s) => !lines.includes(s)) }).toEqual({ page, setup: [] });
    }
    // `em_01m84…` pasted as is is not a request curl can send; ids are captured with jq instead.
    const placeholders = local.flatMap((b) =>
      b.body
        .split('\n')
        .filter((l) => command(l).includes('…'))
        .map((l) => `${where(b)}: ${l.trim()}`),
    );
    expect(placeholders).toEqual([]);
  });
});

describe.runIf(pagesWithLocal.length > 0)('the docs’ local blocks, run as pasted', () => {
  let service: LocalService;
  let home: string;
  /** What the service logged, shown when a page fails. */
  const logged: string[] = [];

  beforeAll(async () => {
    // jq is what the blocks capture ids with (.ci/run installs it).
    expect(() => execFileSync('jq', ['--version'], { stdio: 'pipe' })).not.toThrow();
    // A folder standing for the checkout: the data folder where npm start keeps it (.local-data),
    // and node_modules for the blocks that run Node with the repository's packages.
    home = mkdtempSync(join(tmpdir(), 'docs-examples-'));
    symlinkSync(resolve('node_modules'), join(home, 'node_modules'));
    // curl fails on an HTTP error, so a block whose request is refused fails: what a reader would see.
    writeFileSync(join(home, '.curlrc'), 'fail-with-body\nsilent\nshow-error\n');
    service = await startLocalService({
      port: 0,
      dataDir: join(home, '.local-data'),
      apiKey: readmeKey,
      viewerPort: 0,
      inboundSmtpPort: 0,
      eventDelayMs: 50,
      domainVerifyMs: 300,
      // The blocks run back to back, faster than a person pastes them (the limit has its own test).
      rateLimitPerSecond: 1000,
      // As npm start runs it: the emulators and the consumers on threads of their own.
      threads: true,
      log: (message, fields) => logged.push(`${message} ${JSON.stringify(fields ?? {})}`),
    });
  });
  afterAll(async () => {
    await service?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** A page's local blocks as one script, with the service's ports for the documented ones. */
  function scriptOf(page: string): string {
    const port = new URL(service.baseUrl).port;
    const viewer = new URL(service.viewerUrl).port;
    const smtp = String(service.inboundSmtp.port);
    const parts = local
      .filter((b) => b.page === page)
      .map((b) => {
        const body = b.body
          .replaceAll('localhost:3000', `localhost:${port}`)
          .replaceAll(/\b2525\b/g, smtp)
          .replaceAll(/\b8005\b/g, viewer);
        return `__docs_block=${b.line}\n${body}\n`;
      });
    return [
      'set -euo pipefail',
      `trap 'echo "the block at ${page}:$__docs_block failed (exit $?)" >&2' ERR`,
      // A wait that never ends (a domain never verified) is stopped by the test's timeout.
      `trap 'echo "the block at ${page}:$__docs_block was still running after 120 s" >&2; exit 124' TERM`,
      ...parts,
    ].join('\n');
  }

  it.each(pagesWithLocal)(
    '%s',
    async (page) => {
      const env: Record<string, string | undefined> = { ...process.env, CURL_HOME: home };
      // Nothing from the test's own environment stands in for a page's setup block.
      for (const name of ['API', 'API_KEY', 'CURL_CA_BUNDLE', 'DOMAIN_ID', 'EMAIL_ID']) delete env[name];
      logged.length = 0;
      const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          'bash',
          ['-c', scriptOf(page)],
          { cwd: home, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) || 1 : 0, stdout, stderr }),
        );
      });
      expect(
        result.code,
        `${result.stderr}\n--- stdout (end) ---\n${result.stdout.slice(-2000)}\n--- service ---\n${logged.join('\n')}`,
      ).toBe(0);
    },
    130_000,
  );

  // What npm-start.test.ts checked of the README's examples when it ran them: they did what the
  // README says, beyond answering 2xx.
  it.runIf(pagesWithLocal.includes('README.md'))(
    'the README’s examples did what it says they do',
    async () => {
      const api = httpsClient(service.baseUrl, service.certificate, readmeKey);
      try {
        const { json: list } = await api.call('GET', '/emails?limit=100');
        const bySubject = (subject: string) =>
          (list.data as { id: string; subject: string }[]).filter((e) => e.subject === subject);
        const [tagged] = bySubject('Tagged');
        expect((await api.call('GET', `/emails/${tagged?.id}`)).json).toMatchObject({
          tags: [{ name: 'category', value: 'welcome' }],
          headers: { 'List-Unsubscribe': '<https://acme.test/unsubscribe>' },
        });
        // The permissive batch sent its valid email and named the other.
        expect([bySubject('One').length, bySubject('Two').length]).toEqual([1, 0]);
        const [hello] = bySubject('Hello');
        await expect
          .poll(async () => (await api.call('GET', `/emails/${hello?.id}`)).json?.status, { timeout: 30_000 })
          .toBe('delivered');
      } finally {
        await api.close();
      }
    },
  );
});
