/**
 * What `npm start` finds at a start after the last run ended badly. Each start is its own process,
 * as a user runs it (a handler builds its clients once per process), and the on-disk table is
 * opened directly in between to set up what a kill can leave behind.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { EmailKeys } from '../../functions/adapters/dynamodb/email-keys.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { newEmailId } from '../../functions/shared/ids.js';
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
  const server = dynalite({ path: join(dataDir, 'dynamodb'), deleteTableMs: 0, createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const db = createDocumentClient(client);
  return {
    db,
    client,
    emails: new DynamoEmailRepository(db, 'email-service'),
    async scanAll() {
      const items: Record<string, AttributeValue>[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await client.send(
          new ScanCommand({ TableName: 'email-service', ExclusiveStartKey: start }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start);
      return items;
    },
    async putAll(items: Record<string, AttributeValue>[]) {
      for (let i = 0; i < items.length; i += 25)
        await client.send(
          new BatchWriteItemCommand({
            RequestItems: {
              'email-service': items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
            },
          }),
        );
    },
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
        ExpressionAttributeValues: { ':elsewhere': new EmailKeys().withStatus(id, 'delivered') },
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

  it('keeps scheduled emails over a restart: one that fell due while stopped goes at the start, a later one on time; the new key keeps the old one’s id', async () => {
    const dataDir = join(root, 'scheduled');
    mkdirSync(dataDir, { recursive: true });
    // A generated key: the next start issues a new token for it, under the same id.
    const startGenerated = async () => {
      // Polled often below: a key limit of 10 a second would answer some polls 429.
      const run = await startNpmStart({
        PORT: '0',
        VIEWER_PORT: '0',
        LOCAL_DATA_DIR: dataDir,
        RATE_LIMIT_PER_SECOND: '1000',
      });
      running.push(run);
      const cert = readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
      return { run, api: httpsClient(run.baseUrl, cert, run.apiKey) };
    };
    const first = await startGenerated();
    await verifiedDomain(first.api);
    const email = (subject: string, scheduled_at: string) => ({
      body: {
        from: 'hello@acme.test',
        to: 'success@simulator.amazonses.com',
        subject,
        text: 'x',
        scheduled_at,
      },
    });
    const whileDown = new Date(Date.now() + 3_000).toISOString();
    const afterRestart = new Date(Date.now() + 20_000).toISOString();
    const missed = await first.api.call('POST', '/emails', email('Due while stopped', whileDown));
    const onTime = await first.api.call('POST', '/emails', email('Due after the restart', afterRestart));
    const distant = await first.api.call('POST', '/emails', email('Due in ten days', 'in 10 days'));
    for (const sent of [missed, onTime, distant])
      expect(sent.json).toMatchObject({ last_event: 'scheduled' });
    await first.api.close();
    expect(await first.run.stop()).toBe(0);
    // Stopped until the first one's time has passed.
    await waitFor(
      async () => Date.now(),
      (now) => now > Date.parse(whileDown) + 500,
      10_000,
    );

    const second = await startGenerated();
    expect(second.run.apiKey).not.toBe(first.run.apiKey);
    const delivered = async (id: string, timeoutMs: number) =>
      (
        await waitFor(
          () => second.api.call('GET', `/emails/${id}`),
          (r) => r.json?.status !== 'queued',
          timeoutMs,
        )
      ).json;
    const wentAtStart = await delivered(missed.json.id, 10_000);
    expect(wentAtStart).toMatchObject({ status: 'delivered', scheduled_at: whileDown });
    const wentOnTime = await delivered(onTime.json.id, 30_000);
    expect(wentOnTime.status).toBe('delivered');
    const lateMs = Date.parse(wentOnTime.sent_at) - Date.parse(afterRestart);
    expect(lateMs).toBeGreaterThanOrEqual(0);
    expect(lateMs).toBeLessThan(2_000);
    expect((await second.api.call('GET', `/emails/${distant.json.id}`)).json).toMatchObject({
      status: 'queued',
      last_event: 'scheduled',
    });
    await second.api.close();
    expect(await second.run.stop()).toBe(0);
  }, 120_000);

  it('moves a table made before the due and search indexes into one that has them, keeping every item', async () => {
    const dataDir = join(root, 'old-table');
    const first = await start(dataDir);
    await verifiedDomain(first.api);
    const sent = await first.api.call('POST', '/emails', {
      body: { from: 'hello@acme.test', to: 'success@simulator.amazonses.com', subject: 'Old', text: 'x' },
    });
    await waitFor(
      () => first.api.call('GET', `/emails/${sent.json.id}`),
      (r) => r.json?.status === 'delivered',
    );
    await first.api.close();
    expect(await first.run.stop()).toBe(0);

    // The table as an earlier version made it: the two listing indexes, no due index.
    const table = await openTable(dataDir);
    const items = await table.scanAll();
    await table.client.send(new DeleteTableCommand({ TableName: 'email-service' }));
    // Deleting takes a moment (dynalite deletes the items on disk after answering, as DynamoDB does).
    await waitFor(
      () =>
        table.client.send(new DescribeTableCommand({ TableName: 'email-service' })).then(
          () => 'still there',
          (error: Error) => error.name,
        ),
      (state) => state === 'ResourceNotFoundException',
    );
    await table.client.send(
      new CreateTableCommand({
        TableName: 'email-service',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((AttributeName) => ({
          AttributeName,
          AttributeType: 'S',
        })),
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [1, 2].map((n) => ({
          IndexName: n === 1 ? 'emails-by-time' : 'emails-by-status',
          KeySchema: [
            { AttributeName: `gsi${n}pk`, KeyType: 'HASH' },
            { AttributeName: `gsi${n}sk`, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'created_at'] },
        })),
      }),
    );
    await waitFor(
      () => table.client.send(new DescribeTableCommand({ TableName: 'email-service' })),
      (described) => described.Table?.TableStatus === 'ACTIVE',
    );
    await table.putAll(items);
    await table.close();

    const second = await start(dataDir);
    expect((await second.api.call('GET', `/emails/${sent.json.id}`)).json.status).toBe('delivered');
    const later = await second.api.call('POST', '/emails', {
      body: {
        from: 'hello@acme.test',
        to: 'success@simulator.amazonses.com',
        subject: 'Scheduled on the moved table',
        text: 'x',
        scheduled_at: new Date(Date.now() + 1_000).toISOString(),
      },
    });
    const delivered = await waitFor(
      () => second.api.call('GET', `/emails/${later.json.id}`),
      (r) => r.json?.status === 'delivered',
    );
    expect(delivered.json.status).toBe('delivered');
    await second.api.close();
    expect(await second.run.stop()).toBe(0);
    const reopened = await openTable(dataDir);
    const { Table } = await reopened.client.send(new DescribeTableCommand({ TableName: 'email-service' }));
    await reopened.close();
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual([
      'emails-by-due',
      'emails-by-search',
      'emails-by-status',
      'emails-by-time-keys',
    ]);
  }, 120_000);
});
