import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { emailContent } from '../support/fakes.js';
import { httpsClient, waitFor } from '../support/https.js';
import { startNpmStart } from '../support/npm-start.js';

const dataDir = mkdtempSync(join(tmpdir(), 'email-service-'));
const running: ChildProcess[] = [];
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** A port held by this test, so a start that asks for it finds it taken. */
const takenPort = () =>
  new Promise<{ port: number; release(): void }>((resolve) => {
    const blocker = createServer();
    blocker.listen(0, '127.0.0.1', () =>
      resolve({ port: (blocker.address() as { port: number }).port, release: () => blocker.close() }),
    );
  });
const portOf = (url: string) => Number(new URL(url).port);

/** `npm start` with this test's data folder, stopped at the end whatever happens. */
async function npmStart(env: Record<string, string>, args: string[] = []) {
  const run = await startNpmStart({ LOCAL_DATA_DIR: dataDir, ...env }, args);
  running.push(run.child);
  return run;
}

/** Writes a queued email straight into the stopped service's on-disk table. */
async function strandEmail(): Promise<string> {
  const dynalite = createRequire(import.meta.url)('dynalite') as (o: Record<string, unknown>) => Server;
  const server = dynalite({ path: join(dataDir, 'dynamodb') });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const id = newEmailId();
  await new DynamoEmailRepository(createDocumentClient(client), 'email-service').create({
    id,
    created_at: new Date().toISOString(),
    content: emailContent({ from: 'hello@acme.test', subject: 'Stranded', text: 'x' }),
  });
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return id;
}

describe('npm start (as a user runs it)', () => {
  it('prints the base URL, a key and the viewer; the printed curl works as pasted; data and DEV_API_KEY survive a restart', async () => {
    const first = await npmStart({ PORT: '0', VIEWER_PORT: '0' });
    expect(first.baseUrl).toMatch(/^https:\/\/localhost:\d+\/v1$/);
    const port = portOf(first.baseUrl);
    expect(first.apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(first.viewer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.output()).toMatch(
      /SMTP relay {3}127\.0\.0\.1 port \d+ \(STARTTLS\), port \d+ \(implicit TLS\)/,
    );
    const cert = readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');

    // The "Try it" commands, exactly as printed: add the domain, wait until it is verified, send.
    const tryIt = first.output().slice(first.output().indexOf('Try it'), first.output().indexOf('Ctrl+C'));
    const printed = [...tryIt.matchAll(/^\s*curl [\s\S]*?[^\\]\n/gm)].map((m) => m[0].trim());
    expect(printed).toHaveLength(2);
    const run = async (cmd: string) => JSON.parse((await promisify(execFile)('bash', ['-c', cmd])).stdout);
    const domain = await run(printed[0] ?? '');
    expect(domain).toMatchObject({ object: 'domain', domain: 'acme.test', status: 'pending' });
    const api = httpsClient(first.baseUrl, cert, first.apiKey);
    await waitFor(
      () => api.call('GET', `/domains/${domain.id}`),
      (r) => r.json?.status === 'verified',
    );
    const sent = await run(printed[1] ?? '');
    expect(sent).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'queued' });

    const delivered = await waitFor(
      () => api.call('GET', `/emails/${sent.id}`),
      (r) => r.json?.status === 'delivered',
    );
    expect(delivered.json.status).toBe('delivered');
    await api.close();
    expect(await first.stop()).toBe(0);

    // While it is stopped, leave an email queued whose queue message is gone (the local queue lives
    // in memory): the next start must put it back on the queue and deliver it.
    const stranded = await strandEmail();

    // The README's key, which its examples use (test/e2e/docs-examples.test.ts runs them).
    const readme = readFileSync('README.md', 'utf8');
    const devKey = /DEV_API_KEY=(esk_\S+) npm start/.exec(readme)?.[1] ?? '';
    // The checks below poll, faster than a key's 10 requests a second (tested elsewhere).
    const second = await npmStart({
      PORT: String(port),
      VIEWER_PORT: '0',
      DEV_API_KEY: devKey,
      RATE_LIMIT_PER_SECOND: '1000',
    });
    expect(second.apiKey).toBe(devKey);
    const again = httpsClient(second.baseUrl, cert, devKey);
    const kept = await again.call('GET', `/emails/${sent.id}`);
    expect(kept.json).toMatchObject({ id: sent.id, status: 'delivered' });
    // The key printed by the previous start no longer works: one local key at a time.
    expect((await again.call('GET', '/emails', { key: first.apiKey })).status).toBe(401);
    const recovered = await waitFor(
      () => again.call('GET', `/emails/${stranded}`),
      (r) => r.json?.status === 'delivered',
    );
    expect(recovered.json.status).toBe('delivered');
    await again.close();

    expect(await second.stop()).toBe(0);
  }, 90_000);

  it('--in-memory keeps nothing on disk', async () => {
    const dir = join(dataDir, 'in-memory');
    const run = await npmStart({ PORT: '0', VIEWER_PORT: '0', LOCAL_DATA_DIR: dir }, ['--in-memory']);
    expect(run.output()).toContain('in memory');
    expect(run.output()).toContain('curl -k');
    expect(await run.stop()).toBe(0);
    expect(existsSync(dir)).toBe(false);
  }, 60_000);

  it('says which port is taken: PORT, or VIEWER_PORT, INBOUND_SMTP_PORT or SMTP_RELAY_PORT when it was chosen', async () => {
    const taken = await takenPort();
    try {
      const api = await npmStart({
        PORT: String(taken.port),
        VIEWER_PORT: '0',
        LOCAL_DATA_DIR: join(dataDir, 'other'),
      });
      expect(await api.exited).toBe(1);
      expect(api.output()).toContain(`Port ${taken.port} is in use; set PORT to another one.`);
      const viewer = await npmStart({
        PORT: '0',
        VIEWER_PORT: String(taken.port),
        LOCAL_DATA_DIR: join(dataDir, 'other'),
      });
      expect(await viewer.exited).toBe(1);
      expect(viewer.output()).toContain(`Port ${taken.port} (VIEWER_PORT, the sent-mail viewer) is in use`);
      const inbound = await npmStart({
        PORT: '0',
        VIEWER_PORT: '0',
        INBOUND_SMTP_PORT: String(taken.port),
        LOCAL_DATA_DIR: join(dataDir, 'other'),
      });
      expect(await inbound.exited).toBe(1);
      expect(inbound.output()).toContain(
        `Port ${taken.port} (INBOUND_SMTP_PORT, the inbound SMTP endpoint) is in use`,
      );
      const relay = await npmStart({
        PORT: '0',
        VIEWER_PORT: '0',
        SMTP_RELAY_PORT: String(taken.port),
        LOCAL_DATA_DIR: join(dataDir, 'other'),
      });
      expect(await relay.exited).toBe(1);
      expect(relay.output()).toContain(
        `Port ${taken.port} (SMTP_RELAY_PORT, the SMTP relay's STARTTLS port) is in use; set SMTP_RELAY_PORT to another one.`,
      );
    } finally {
      taken.release();
    }
  }, 60_000);

  it('stops at once on an invalid setting, naming it and the values it takes', async () => {
    const run = await npmStart({
      PORT: '0',
      VIEWER_PORT: '0',
      LOCAL_DATA_DIR: join(dataDir, 'bad-setting'),
      WEBHOOK_ALLOW_LOOPBACK: '1',
    });
    expect(await run.exited).toBe(1);
    expect(run.output()).not.toContain('Base URL');
    expect(run.output()).toMatch(/WEBHOOK_ALLOW_LOOPBACK is "1"; .*"true".*"false"/);
  }, 60_000);

  it('refuses to open a data folder another npm start still uses, and says which process to stop', async () => {
    const dir = join(dataDir, 'shared');
    const first = await npmStart({ PORT: '0', VIEWER_PORT: '0', LOCAL_DATA_DIR: dir });
    try {
      const second = await npmStart({ PORT: '0', VIEWER_PORT: '0', LOCAL_DATA_DIR: dir });
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(
        `Another npm start (process ${first.child.pid}) is still using ${dir}/`,
      );
    } finally {
      expect(await first.stop()).toBe(0);
    }
  }, 60_000);

  it('survives kill -9 mid-stream: every email accepted before it is final within a minute of the restart, none sent twice', async () => {
    const dir = join(dataDir, 'killed');
    const env = { PORT: '0', VIEWER_PORT: '0', LOCAL_DATA_DIR: dir, RATE_LIMIT_PER_SECOND: '1000' };
    const first = await npmStart(env);
    const cert = readFileSync(join(dir, 'tls', 'localhost-cert.pem'), 'utf8');
    const api = httpsClient(first.baseUrl, cert, first.apiKey);
    const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    await waitFor(
      () => api.call('GET', `/domains/${domain.json.id}`),
      (r) => r.json?.status === 'verified',
    );
    // A stream of sends from four clients at once; the process is killed while they are in flight.
    const accepted: string[] = [];
    const recipients = ['success', 'bounce', 'complaint', 'suppressionlist'];
    let next = 0;
    const client = async () => {
      while (next < 80) {
        const i = next++;
        const to = `${recipients[i % recipients.length]}@simulator.amazonses.com`;
        const sent = await api
          .call('POST', '/emails', { body: { from: 'hello@acme.test', to, subject: `kill ${i}`, text: 'x' } })
          .catch(() => undefined);
        if (sent?.status === 200) accepted.push(sent.json.id);
        else if (sent !== undefined) throw new Error(`unexpected ${sent.status}`);
        else return; // the process is gone
      }
    };
    const stream = Promise.all(Array.from({ length: 4 }, client));
    await waitFor(
      async () => accepted.length,
      (n) => n >= 25,
    );
    first.child.kill('SIGKILL');
    await stream.catch(() => undefined);
    await first.exited;
    await api.close();
    expect(accepted.length).toBeGreaterThanOrEqual(25);

    const second = await npmStart({ ...env, DEV_API_KEY: '' });
    const restartedAt = Date.now();
    const again = httpsClient(second.baseUrl, cert, second.apiKey);
    const statuses = async () =>
      Promise.all(
        accepted.map(async (id) => (await again.call('GET', `/emails/${id}`)).json?.status as string),
      );
    const final = await waitFor(statuses, (list) => list.every((status) => status !== 'queued'), 60_000);
    const stuck = accepted.filter((_, i) => final[i] === 'queued');
    const details = await Promise.all(
      stuck.map(async (id) => (await again.call('GET', `/emails/${id}`)).json),
    );
    expect(details).toEqual([]);
    expect(Date.now() - restartedAt).toBeLessThan(60_000);
    // The local SES's ledger (on disk, written before it answers) counts what reached it.
    const reached = new Map<string, number>();
    for (const line of readFileSync(join(dir, 'ses', 'sent.jsonl'), 'utf8').split('\n')) {
      let entry: { type: string; emailId: string };
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // empty, or cut short by the kill
      }
      if (entry.type === 'forwarded') reached.set(entry.emailId, (reached.get(entry.emailId) ?? 0) + 1);
    }
    expect(accepted.filter((id) => (reached.get(id) ?? 0) > 1)).toEqual([]);
    await again.close();
    expect(await second.stop()).toBe(0);
  }, 120_000);
});
