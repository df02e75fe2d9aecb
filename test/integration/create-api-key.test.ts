import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { hashToken } from '../../functions/api-keys/model.js';
import { startTestTable, type TestTable } from '../support/table.js';

const run = promisify(execFile);
let table: TestTable;
beforeAll(async () => {
  table = await startTestTable('EmailService-Table-TEST');
});
afterAll(() => table.stop());

const script = (args: string[]) =>
  run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'bin/create-api-key.ts', ...args], {
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
  });

describe('npm run create-api-key (first key on AWS)', () => {
  it('stores only the hash of a new full-access key and prints the token once', async () => {
    const { stdout } = await script(['--table', table.tableName, '--name', 'first']);
    const token = /\b(esk_[A-Za-z0-9_-]{43})\b/.exec(stdout)?.[1];
    expect(token).toBeDefined();
    const key = await new DynamoApiKeyRepository(table.db, table.tableName).findByHash(
      hashToken(token as string),
    );
    expect(key).toMatchObject({
      name: 'first',
      permission: 'full_access',
      id: expect.stringMatching(/^key_/),
    });
    const { Items } = await table.db.send(new ScanCommand({ TableName: table.tableName }));
    expect(JSON.stringify(Items)).not.toContain(token);
  });

  it('finds the table in the cdk deploy outputs file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outputs-'));
    const outputs = join(dir, 'cdk-outputs.json');
    writeFileSync(
      outputs,
      JSON.stringify({ EmailService: { TableName: table.tableName, ApiUrl: 'https://x/v1' } }),
    );
    const { stdout } = await script(['--outputs', outputs, '--name', 'from-outputs']);
    expect(stdout).toContain(`in ${table.tableName}`);
  });

  it('refuses a bad permission and a missing table clearly', async () => {
    await expect(script(['--table', table.tableName, '--permission', 'root'])).rejects.toMatchObject({
      stderr: expect.stringContaining('--permission must be one of'),
    });
    await expect(script(['--outputs', '/nonexistent.json'])).rejects.toMatchObject({
      stderr: expect.stringContaining('No table given'),
    });
  });
});
