/**
 * What `npm start` finds at a start after the last run ended badly. Each start is its own process,
 * as a user runs it (a handler builds its clients once per process), and the on-disk table is
 * opened directly in between to set up what a kill can leave behind.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { newEmailId } from '../../functions/core/ids.js';
import { emailContent } from '../support/fakes.js';
import { httpsClient, waitFor } from '../support/https.js';
import { type NpmStart, startNpmStart } from '../support/npm-start.js';

const root = mkdtempSync(join(tmpdir(), 'local-recovery-'));
const running: NpmStart[] = [];
afterAll(() => {
  for (const run of running) run.child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const KEY = 'esk_local_recovery_test_key_0123456789';
async function start(dataDir: string) {
  const run = await startNpmStart({ PORT: '0', VIEWER_PORT: '0', LOCAL_DATA_DIR: dataDir, DEV_API_KEY: KEY });
  running.push(run);
  const api = httpsClient(run.baseUrl, readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8'), KEY);
  return { run, api };
}

async function verifiedDomain(api: ReturnType<typeof httpsClient>) {
  const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
  expect(domain.status).toBe(201);
  const verified = await waitFor(
    () => api.call('GET', `/domains/${domain.json.id}`),
    (r) => r.json?.status === 'verified',
  );
  expect(verified.json.status).toBe('verified');
}

/** Opens the stopped service's on-disk table. */
async function openTable(dataDir: string) {
  const dynalite = createRequire(import.meta.url)('dynalite') as (o: Record<string, unknown>) => Server;
  const server = dynalite({ path: join(dataDir, 'dynamodb') });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const db = createDocumentClient(client);
  return {
    db,
    emails: new DynamoEmailRepository(db, 'email-service'),
    async close() {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('npm start after a run that ended badly', () => {
  it('puts back in the queued index an email a kill left half-written by dynalite, and delivers it', async () => {
    const dataDir = join(root, 'half-written');
    const first = await start(dataDir);
    await verifiedDomain(first.api);
    await first.api.close();
    expect(await first.run.stop()).toBe(0);

    // What a kill in the middle of dynalite's write of a status change leaves: the status item says
    // queued, while the queued index has lost it (its entry moved under another status).
    const table = await openTable(dataDir);
    const id = newEmailId();
    await table.emails.create({
      id,
      created_at: new Date().toISOString(),
      content: emailContent({ from: 'hello@acme.test', subject: 'Half-written', text: 'x' }),
    });
    await table.db.send(
      new UpdateCommand({
        TableName: 'email-service',
        Key: { pk: keys.email(id), sk: keys.status },
        UpdateExpression: 'SET gsi2pk = :elsewhere',
        ExpressionAttributeValues: { ':elsewhere': keys.emailsWithStatus('delivered') },
      }),
    );
    await table.close();
    // As a kill leaves it: the marker names a process that is gone.
    writeFileSync(join(dataDir, 'running'), String(spawnSync(process.execPath, ['-e', '0']).pid));

    const second = await start(dataDir);
    const email = await waitFor(
      () => second.api.call('GET', `/emails/${id}`),
      (r) => r.json?.status !== 'queued',
      20_000,
    );
    expect(email.json.status).toBe('delivered');
    await second.api.close();
    expect(await second.run.stop()).toBe(0);
  }, 90_000);

  it('keeps the same DEV_API_KEY as the same key: one key listed, idempotent requests from before replay', async () => {
    const dataDir = join(root, 'same-key');
    const first = await start(dataDir);
    await verifiedDomain(first.api);
    const body = {
      from: 'hello@acme.test',
      to: 'success@simulator.amazonses.com',
      subject: 'Once',
      text: 'x',
    };
    const sent = await first.api.call('POST', '/emails', {
      body,
      headers: { 'idempotency-key': 'across-restart' },
    });
    expect(sent.json).toMatchObject({ status: 'queued' });
    await first.api.close();
    expect(await first.run.stop()).toBe(0);

    const second = await start(dataDir);
    const again = await second.api.call('POST', '/emails', {
      body,
      headers: { 'idempotency-key': 'across-restart' },
    });
    expect(again.json.id).toBe(sent.json.id);
    const listed = (await second.api.call('GET', '/api-keys')).json.data as { name: string }[];
    expect(listed.filter((k) => k.name === 'local development')).toHaveLength(1);
    await second.api.close();
    expect(await second.run.stop()).toBe(0);
  }, 90_000);
});
