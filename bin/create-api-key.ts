#!/usr/bin/env node
/**
 * Creates an API key directly in the deployed table with your own AWS credentials, and prints
 * the token once (only its SHA-256 is stored). This is how the first key of a deployment is made.
 *
 *   npx cdk deploy --outputs-file cdk-outputs.json
 *   npm run create-api-key -- --name "production"            # table from cdk-outputs.json
 *   npm run create-api-key -- --table EmailService-Table... --name ci --permission full_access
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DynamoApiKeyRepository } from '../functions/adapters/dynamodb/api-key-repository.js';
import { createDocumentClient } from '../functions/adapters/dynamodb/client.js';
import { generateApiKey, type Permission } from '../functions/api-keys/model.js';

const PERMISSIONS: Permission[] = ['full_access', 'sending_access'];

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const { values } = parseArgs({
  options: {
    table: { type: 'string' },
    name: { type: 'string', default: 'admin' },
    permission: { type: 'string', default: 'full_access' },
    outputs: { type: 'string', default: 'cdk-outputs.json' },
    stack: { type: 'string', default: 'EmailService' },
  },
});

function tableFromOutputs(): string | undefined {
  if (!values.outputs || !existsSync(values.outputs)) return undefined;
  const outputs = JSON.parse(readFileSync(values.outputs, 'utf8')) as Record<string, Record<string, string>>;
  return outputs[values.stack ?? 'EmailService']?.TableName;
}

const tableName = values.table ?? process.env.TABLE_NAME ?? tableFromOutputs();
if (!tableName) {
  fail(
    'No table given. Deploy with `npx cdk deploy --outputs-file cdk-outputs.json`, or pass --table <TableName output of the stack>.',
  );
}
const permission = values.permission as Permission;
if (!PERMISSIONS.includes(permission)) fail(`--permission must be one of ${PERMISSIONS.join(', ')}`);
const name = (values.name ?? '').trim();
if (!name || name.length > 100) fail('--name must be 1 to 100 characters');

try {
  const { key, token } = generateApiKey(name, permission, new Date());
  await new DynamoApiKeyRepository(createDocumentClient(), tableName).put(key);
  console.log(`Created API key ${key.id} ("${name}", ${permission}) in ${tableName}.`);
  console.log('Store it now; it is not shown again and cannot be recovered:\n');
  console.log(`  ${token}\n`);
} catch (error) {
  fail(`Could not create the key in ${tableName}: ${(error as Error).name}: ${(error as Error).message}`);
}
