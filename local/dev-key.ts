import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyRepository } from '../functions/adapters/dynamodb/api-key-repository.js';
import type { createDocumentClient } from '../functions/adapters/dynamodb/client.js';
import { keys } from '../functions/adapters/dynamodb/table.js';
import { generateApiKey, hashToken, looksLikeToken, TOKEN_PREFIX } from '../functions/api-keys/model.js';
import { TABLE_NAME } from './resources.js';

/**
 * The local full-access key: DEV_API_KEY when given, else a new one. Only its hash is stored, and
 * the token issued by the previous start is revoked, so exactly one local key works at a time; the
 * key keeps its id from start to start.
 */
export async function issueDevKey(
  db: ReturnType<typeof createDocumentClient>,
  chosen?: string,
): Promise<string> {
  const repo = new DynamoApiKeyRepository(db, TABLE_NAME);
  const tableName = TABLE_NAME;
  const pointer = { pk: keys.localDevKey, sk: 'LOCAL' };
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: pointer }));
  let token: string;
  const { key, token: generated } = generateApiKey('local development', 'full_access', new Date());
  if (chosen !== undefined) {
    if (!looksLikeToken(chosen)) {
      throw new Error(
        `DEV_API_KEY must be "${TOKEN_PREFIX}" followed by 16 to 128 letters, digits, "-" or "_".`,
      );
    }
    token = chosen;
    key.hash = hashToken(chosen);
  } else {
    token = generated;
  }
  if (Item?.hash && Item.hash !== key.hash) {
    // The new key keeps the old one's id: what is scoped to the local key (its idempotency keys,
    // the emails it scheduled, which are sent only while their key exists) carries over a restart.
    const previous = await repo.findByHash(String(Item.hash));
    if (previous) key.id = previous.id;
    await repo.deleteByHash(String(Item.hash));
  }
  // The same DEV_API_KEY as last time keeps its key (and id): what is scoped to it, its idempotency
  // keys above all, carries over a restart.
  if (!(Item?.hash === key.hash && (await repo.findByHash(key.hash)))) await repo.put(key);
  await db.send(new PutCommand({ TableName: tableName, Item: { ...pointer, hash: key.hash } }));
  return token;
}
