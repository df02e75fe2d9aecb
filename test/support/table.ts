import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { applyDynamoParity } from '../../local/dynamo-parity.js';
import { ensureTable } from '../../local/resources.js';

const require = createRequire(import.meta.url);

export interface TestTable {
  client: DynamoDBClient;
  db: ReturnType<typeof createDocumentClient>;
  tableName: string;
  endpoint: string;
  stop(): Promise<void>;
}

/** An in-memory dynalite (the emulator `npm start` uses) with the stack's table, on a free port. */
export async function startTestTable(tableName = 'test-table'): Promise<TestTable> {
  applyDynamoParity();
  const dynalite = require('dynalite') as (opts: Record<string, unknown>) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  await ensureTable(client, tableName);
  return {
    client,
    db: createDocumentClient(client),
    tableName,
    endpoint,
    async stop() {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
