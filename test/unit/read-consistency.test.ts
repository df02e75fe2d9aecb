import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { newEmailId } from '../../functions/shared/ids.js';

/**
 * The local DynamoDB has one copy of each item, so every read sees the last write; DynamoDB's
 * default (eventually consistent) read may not. Each read that may follow, within moments, a write
 * the caller depends on asks for a strongly consistent one (checked on the request, as the SDK
 * sends it).
 */
const db = mockClient(DynamoDBDocumentClient);
afterEach(() => db.reset());
const doc = createDocumentClient(new DynamoDBClient({ region: 'us-east-1' }));

describe('reads that follow a write', () => {
  it('the consumer reads a job that came as a reference strongly consistent (summary and body)', async () => {
    db.on(BatchGetCommand).resolves({ Responses: { t: [] } });
    await new DynamoEmailRepository(doc, 't').getContent(newEmailId());
    const [call] = db.commandCalls(BatchGetCommand);
    expect(call?.args[0].input.RequestItems?.t?.ConsistentRead).toBe(true);
  });

  it('GET /v1/emails/{id} and its attachments read the email strongly consistent', async () => {
    db.on(QueryCommand).resolves({ Items: [] });
    db.on(GetCommand).resolves({});
    const repo = new DynamoEmailRepository(doc, 't');
    await repo.get(newEmailId());
    await repo.getAttachments(newEmailId());
    expect(db.commandCalls(QueryCommand)[0]?.args[0].input.ConsistentRead).toBe(true);
    expect(db.commandCalls(GetCommand)[0]?.args[0].input.ConsistentRead).toBe(true);
  });

  it('a key is looked up strongly consistent, so it works right after it was created', async () => {
    db.on(GetCommand).resolves({});
    await new DynamoApiKeyRepository(doc, 't').findByHash('a'.repeat(64));
    expect(db.commandCalls(GetCommand)[0]?.args[0].input.ConsistentRead).toBe(true);
  });
});
