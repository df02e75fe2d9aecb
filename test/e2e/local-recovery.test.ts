import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { newEmailId } from '../../functions/core/ids.js';
import { type LocalService, startLocalService } from '../../functions/local/service.js';
import { httpsClient, waitFor } from '../support/https.js';

const dataDir = mkdtempSync(join(tmpdir(), 'local-recovery-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const start = () =>
  startLocalService({
    port: 0,
    dataDir,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 100,
    rateLimitPerSecond: 1000,
  });
const repositoryOf = (service: LocalService) => {
  const client = new DynamoDBClient({
    endpoint: service.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  return {
    db: createDocumentClient(client),
    emails: new DynamoEmailRepository(createDocumentClient(client), service.tableName),
    client,
  };
};

describe('local recovery after a kill', () => {
  it('puts back in the queued index an email a kill left half-written by dynalite, and delivers it', async () => {
    let service = await start();
    const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
    const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    await waitFor(
      () => api.call('GET', `/domains/${domain.json.id}`),
      (r) => r.json?.status === 'verified',
    );
    await api.close();
    // What a kill in the middle of dynalite's write of a status change leaves: the status item says
    // queued, while the queued index has lost it (its entry moved under another status).
    const { db, emails, client } = repositoryOf(service);
    const id = newEmailId();
    await emails.create({
      id,
      created_at: new Date().toISOString(),
      content: {
        from: 'hello@acme.test',
        to: ['success@simulator.amazonses.com'],
        cc: [],
        bcc: [],
        reply_to: [],
        subject: 'Half-written',
        html: null,
        text: 'x',
      },
    });
    await db.send(
      new UpdateCommand({
        TableName: service.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        UpdateExpression: 'SET gsi2pk = :elsewhere',
        ExpressionAttributeValues: { ':elsewhere': keys.emailsWithStatus('delivered') },
      }),
    );
    client.destroy();
    await service.stop();
    writeFileSync(join(dataDir, 'running'), '1'); // as a kill leaves it

    service = await start();
    try {
      const again = httpsClient(service.baseUrl, service.certificate, service.apiKey);
      const email = await waitFor(
        () => again.call('GET', `/emails/${id}`),
        (r) => r.json?.status !== 'queued',
        20_000,
      );
      expect(email.json.status).toBe('delivered');
      await again.close();
    } finally {
      await service.stop();
    }
  }, 60_000);
});
